// Finds, on the host, what the deny sets of one plan apply to: secret names and home-relative
// secrets (.config/gh, .docker/config.json ...) in any bound tree, Unix sockets in any bound
// tree (hidden unless the spec names them), what the host runs or trusts automatically
// (policy/trusted_names.h) at any depth under writable mounts (not inside runner state dirs,
// which the operator declared writable), existing names matching the filename-pattern denies
// under any writable mount, protected-path and system-secret globs expanded (a literal path
// with glob characters in its name included), and the user's home directories. Walks
// without following symlinks; inside .git it skips objects/, refs/, logs/ and lfs/.
#ifndef CCSANDBOX_BROKER_DENY_SCAN_H_
#define CCSANDBOX_BROKER_DENY_SCAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/plan/deny_sets.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::broker {

struct ScanRequest {
  std::vector<v1::PlanMount> mounts;
  std::vector<std::string> runner_state_dirs;
  std::vector<std::string> protected_paths;  // globs allowed
  std::vector<std::string> home_dirs;
  // Filename-pattern denies (writeDenyPatterns): existing files, directories and links with a
  // matching name anywhere under a writable mount are made read-only at launch.
  std::vector<std::string> filename_deny_patterns;
  // spec.denyWriteNames: rules added to the standard trusted-name list.
  std::vector<std::string> extra_trusted_names;
  // spec.connectableSockets: sockets in bound trees that stay visible (all others are hidden).
  std::vector<std::string> connectable_sockets;
  // A tree larger than this is refused (RESOURCE_EXHAUSTED) rather than half-scanned.
  size_t max_entries = 2'000'000;
};

absl::StatusOr<policy::DenyScan> ScanForDenyPaths(const ScanRequest& request);

// The current user's home directories: passwd's and $HOME, de-duplicated.
std::vector<std::string> CurrentHomeDirs();

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_DENY_SCAN_H_
