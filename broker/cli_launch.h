// How sandboxctl asks the broker for a session: the LaunchRequest built from --spec, --workdir,
// --backend and --no-filename-denies (one code path for `run` and `session start`), and the
// Launch call, which says on stderr when the session is weakened or unsandboxed.
//
//   absl::StatusOr<std::string> workdir = ResolveWorkdir(flags.workdir);
//   absl::StatusOr<v1::LaunchRequest> launch = BuildLaunchRequest(flags, *workdir);
//   absl::StatusOr<v1::SandboxHandle> handle = LaunchSession(stub, *launch, json);
//
// A request is complete and checked (policy::CheckSpecLimits) before anything is sent, so a
// refusal leaves no session behind.
#ifndef CCSANDBOX_BROKER_CLI_LAUNCH_H_
#define CCSANDBOX_BROKER_CLI_LAUNCH_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/sandbox.grpc.pb.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

// The command-line flags that shape a session.
struct LaunchFlags {
  std::string spec_file;  // --spec: "" = DefaultSpec of the working directory
  std::string workdir;    // --workdir: "" = the current directory
  std::string backend;    // --backend: "" = the host's dispatch default
  bool no_filename_denies = false;
};

// `flag` made absolute with symlinks resolved; the current directory when `flag` is empty.
absl::StatusOr<std::string> ResolveWorkdir(const std::string& flag);

// "cli-PID-RANDOM": the session id when the spec names none.
std::string NewSessionId();

// The Launch request: the spec file (or DefaultSpec(workdir) without one), a fresh session id
// when the spec has none, the backend, and the filename denies cleared on request.
absl::StatusOr<v1::LaunchRequest> BuildLaunchRequest(const LaunchFlags& flags,
                                                     const std::string& workdir);

// What sandboxctl tells the user on stderr about a launched session ("" when nothing):
// "sandboxctl: filename-pattern denies WEAKENED …" and "sandboxctl: running UNSANDBOXED (…)".
std::string LaunchNotices(const v1::SandboxHandle& handle);

// Launches the session; prints LaunchNotices on stderr unless `json`.
absl::StatusOr<v1::SandboxHandle> LaunchSession(v1::SandboxBroker::Stub& stub,
                                                const v1::LaunchRequest& launch, bool json);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_LAUNCH_H_
