// The macOS native launch as data: one run's Seatbelt profile (rendered by policy/seatbelt with
// the session's real proxy ports) and its argv, scrubbed environment and working directory
// become the exact `sandbox-exec -f PROFILE -- ARGV` exec, with the proxy variables pointing at
// the session's loopback proxies. Pure, platform-independent and golden-tested on Linux; the
// spawn itself is seatbelt_launch.h.
//
//   absl::StatusOr<std::string> profile = RunDispatchProfile(spec, homes, {tmp}, egress, resolver);
//   // ... the launch writes *profile to a kept file (seatbelt_launch.h) ...
//   absl::StatusOr<SeatbeltExec> exec = RenderSeatbeltExec(
//       {.profile_path = kept, .argv = argv, .env = scrubbed, .workdir = cwd, .egress = egress});
//
// The profile and the environment come from the one EgressPlan, so the ports the profile lets
// the sandbox reach are the ports its proxy variables name. `-f` rather than `-p`: the profile
// of every launch is kept on disk for diagnostics (its path goes into the handle's details), and
// an argv of a few hundred KiB of profile text is not one to put in `ps`.
#ifndef CCSANDBOX_LAUNCHER_MACOS_SEATBELT_EXEC_H_
#define CCSANDBOX_LAUNCHER_MACOS_SEATBELT_EXEC_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/host_view.h"
#include "proto/launcher.pb.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::launcher::macos {

inline constexpr char kSandboxExecPath[] = "/usr/bin/sandbox-exec";

struct SeatbeltRun {
  std::string profile_path;                // absolute: the kept profile of this launch
  std::vector<std::string> argv;           // the command; argv[0] is searched on env's PATH
  std::map<std::string, std::string> env;  // the run's environment, already scrubbed
  std::string workdir;                     // absolute
  // The session's loopback-port egress (SessionEgress, EgressListeners::kLoopbackPorts); unset:
  // no proxy variables (the terminal profile, whose network is open).
  std::optional<v1::EgressPlan> egress;
};

// What to exec: execve(executable, argv, envp) in cwd.
struct SeatbeltExec {
  std::string executable;
  std::vector<std::string> argv;
  std::vector<std::string> envp;  // "NAME=value", sorted by name
  std::string cwd;
};

// INVALID_ARGUMENT naming the field: an empty argv, a relative profile path or workdir, an egress
// plan without both ports and both URLs (or with Unix sockets: the Linux plan), a variable name
// that is empty or holds '=' or NUL, a value or argument with NUL. The proxy variables replace any
// the caller's environment set: the command is pointed at its own session's proxies only.
absl::StatusOr<SeatbeltExec> RenderSeatbeltExec(const SeatbeltRun& run,
                                                const std::string& sandbox_exec = kSandboxExecPath);

// The dispatch profile of one run of `spec`: policy/seatbelt's renderer with the session's real
// proxy ports from `egress` (INVALID_ARGUMENT when it has none), `home_dirs` and the run's
// `temp_dirs`, every path also in the spelling `resolver` gives it.
absl::StatusOr<std::string> RunDispatchProfile(const v1::SandboxSpec& spec,
                                               const std::vector<std::string>& home_dirs,
                                               const std::vector<std::string>& temp_dirs,
                                               const v1::EgressPlan& egress,
                                               const PathResolver& resolver);

}  // namespace ccsandbox::launcher::macos

#endif  // CCSANDBOX_LAUNCHER_MACOS_SEATBELT_EXEC_H_
