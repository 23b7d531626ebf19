// A SandboxSpec as a Seatbelt profile for `sandbox-exec -p` (spec: "macOS: Seatbelt"), and the
// fixed terminal profile ("Server-hosted terminal"), from the same lists as the Linux plan:
// deny_sets.h (secrets), trusted_names.h (the mandatory deny-write set), the filename patterns.
// Pure: paths get their resolved spelling from the injected resolver. Later rules win in SBPL,
// so each section narrows what the one before it allowed:
//
//   (version 1) (allow default)
//   1. deny file-read*   the secrets (names at any depth, home paths, system secrets)
//   (1 to 4 are the terminal profile's too, over $HOME and its working directory)
//   2. deny file-write*  everything, then allow the writable subpaths
//   3. deny file-write*  the mandatory set at any depth, home trusted paths, protected paths,
//                        filename patterns, the secrets
//   4. deny file-write-unlink  every denied path's ancestors (a rename cannot move them away)
//   5. process-exec      deny under writable dirs, allow under execGrantRoots, deny dangerous
//   6. network-outbound  deny, allow the proxy ports on localhost and DNS
//
//   absl::StatusOr<SeatbeltInputs> in = DispatchInputs(spec, {"/Users/a"}, {tmpdir}, ports);
//   absl::StatusOr<std::string> profile = RenderDispatchProfile(*in, MacosSpellings());
#ifndef CCSANDBOX_POLICY_SEATBELT_SEATBELT_PROFILE_H_
#define CCSANDBOX_POLICY_SEATBELT_SEATBELT_PROFILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/host_view.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy::seatbelt {

// One of the session's loopback proxies; port 0 = not chosen yet (a plan), rendered as
// "localhost:<NAME PORT>".
struct ProxyPort {
  std::string name;  // "HTTP PROXY"
  int port = 0;
};

struct SeatbeltInputs {
  std::vector<std::string> home_dirs;        // absolute
  std::vector<std::string> writable;         // per mode binds, runner state, the run's temp dirs
  std::vector<std::string> protected_paths;  // spec.protectedPaths (globs allowed)
  std::vector<std::string> exec_grant_roots;
  std::vector<std::string> extra_trusted_rules;  // spec.denyWriteNames
  std::vector<std::string> filename_patterns;    // EffectiveFilenameDenyPatterns
  std::vector<ProxyPort> proxy_ports;
  bool network_enabled = true;  // off: the same rules, the proxies refuse everything
};

// The inputs of a dispatch spec (checked by CheckLaunchSpec): the writable binds per mode (chat:
// those not readOnly; review/plan/orchestrate: none), then runnerStateDirs and `temp_dirs`.
absl::StatusOr<SeatbeltInputs> DispatchInputs(const v1::SandboxSpec& spec,
                                              const std::vector<std::string>& home_dirs,
                                              const std::vector<std::string>& temp_dirs,
                                              const std::vector<ProxyPort>& proxy_ports);

// The dispatch profile. INVALID_ARGUMENT when a path or pattern cannot be spelled safely (a
// control character, a glob class of punctuation).
absl::StatusOr<std::string> RenderDispatchProfile(const SeatbeltInputs& inputs,
                                                  const PathResolver& resolver);

// The terminal profile: the file sections of a writable session over `home`, `workdir` and
// `temp_dirs` (secrets unreadable, the mandatory set and the home trusted paths read-only, as
// the Linux terminal's deny scan and create guard; no filename patterns, no protected paths),
// the network and exec open.
absl::StatusOr<std::string> RenderTerminalProfile(const std::string& home,
                                                  const std::string& workdir,
                                                  const std::vector<std::string>& temp_dirs,
                                                  const PathResolver& resolver);

// Always-dangerous binaries no sandboxed run may exec, each with its reason in the .cc.
const std::vector<std::string>& DangerousBinaries();

}  // namespace ccsandbox::policy::seatbelt

#endif  // CCSANDBOX_POLICY_SEATBELT_SEATBELT_PROFILE_H_
