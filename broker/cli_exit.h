// sandboxctl's own failures: one line on stderr and exit code 125, whatever the subcommand
// (the command's own exit codes, 128+signal and the policy verdicts stay distinguishable).
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
