// sandboxctl's own failures: one line on stderr and exit code 125, whatever the subcommand
// (the command's own exit codes, 128+signal and the policy verdicts stay distinguishable).
//
//   run [--session=ID]   the command's code; 128+signal when it was killed (timeout, Kill, session
//                        stopped, Ctrl-C); 125 when sandboxctl, the broker or the launcher failed,
//                        for a usage error, and for a session that does not exist
//   session ..., probe,  0; 125 on any failure (an unknown session included; for plan, a spec
//   plan                 the broker refuses)
//   policy check         0 allow, 1 prompt, 2 deny; 125 on any failure
//   --help, --version    0
//
// The line is "sandboxctl: MESSAGE", or with --json (SetJsonErrors) one JSON object:
//   {"error":{"code":"usage","message":"session ls: does not take --spec (see ...)"}}
// code: "usage" (the command line), "not_found" (no such session), "failed" (anything else).
#ifndef CCSANDBOX_BROKER_CLI_EXIT_H_
#define CCSANDBOX_BROKER_CLI_EXIT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ccsandbox::broker {

inline constexpr int kToolError = 125;

inline constexpr absl::string_view kUsageError = "usage";
inline constexpr absl::string_view kNotFoundError = "not_found";
inline constexpr absl::string_view kFailedError = "failed";

// Whether Fail prints JSON (set once, from --json, before anything can fail).
void SetJsonErrors(bool json);

// Prints the failure on stderr and returns kToolError.
int Fail(const std::string& message, absl::string_view code = kFailedError);

// The JSON line of a failure (no newline).
std::string ErrorJson(absl::string_view code, absl::string_view message);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_EXIT_H_
