// sandboxctl's own failures: one line on stderr and exit code 125, whatever the subcommand
// (the command's own exit codes, 128+signal and the policy verdicts stay distinguishable).
//
//   run [--session=ID]   the command's code; 128+signal when it was killed (timeout, Kill, session
//                        stopped, Ctrl-C); 125 when sandboxctl, the broker or the launcher failed,
//                        for a usage error, and for a session that does not exist
//   session ..., probe   0; 125 on any failure (an unknown session included)
//   policy check         0 allow, 1 prompt, 2 deny; 125 on any failure
#ifndef CCSANDBOX_BROKER_CLI_EXIT_H_
#define CCSANDBOX_BROKER_CLI_EXIT_H_

#include <iostream>
#include <string>

namespace ccsandbox::broker {

inline constexpr int kToolError = 125;

inline int Fail(const std::string& message) {
  std::cerr << "sandboxctl: " << message << std::endl;
  return kToolError;
}

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_EXIT_H_
