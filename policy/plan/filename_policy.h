// Whether a session's filename-pattern write denies (.env, *.key, *.pem: no NEW file with
// such a name in a writable bind) can be honoured on its backend. bubblewrap can shadow
// existing paths but not forbid creating new ones, so without create-time enforcement a
// native Linux session that needs them FAILS CLOSED (spec) instead of running weaker.
#ifndef CCSANDBOX_POLICY_PLAN_FILENAME_POLICY_H_
#define CCSANDBOX_POLICY_PLAN_FILENAME_POLICY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

struct FilenamePolicyDecision {
  // "enforced", "not needed (nothing writable)", "not applicable (backend none)" or
  // "WEAKENED by request: ..." — for the handle's details and the log.
  std::string note;
  bool weakened = false;
  // The runs of this session carry a create guard: always on a native session with something
  // writable (the trusted-name rules, policy/trusted_names.h, are not optional), with these
  // filename patterns (empty after the explicit opt-out).
  bool create_guard = false;
  std::vector<std::string> create_guard_patterns;
};

// FAILED_PRECONDITION, saying exactly why, when `spec` needs pattern denies on the native
// backend, something in it is writable, and create-time enforcement is unavailable.
absl::StatusOr<FilenamePolicyDecision> DecideFilenamePolicy(const v1::SandboxSpec& spec,
                                                            v1::SandboxBackend backend,
                                                            bool create_time_enforcement);

// The boot line's clause about these denies, from what the launcher reported
// (LauncherProbeResponse.create_guard_*); `known` false when the launcher did not answer.
std::string FilenameEnforcementNote(bool known, bool available, const std::string& reason);

// True when a native session of `spec` has any writable mount (a chat-mode bind that is not
// readOnly, or a runner state dir).
bool HasWritableMount(const v1::SandboxSpec& spec);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_FILENAME_POLICY_H_
