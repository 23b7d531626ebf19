// sandboxctl term: attaches this terminal to a hosted terminal (the Terminal RPC). Raw mode
// while attached, restored on every way out; the window size follows SIGWINCH; the exit code is
// the shell's (128+signal when it was killed), 125 when the terminal could not be opened.
#ifndef CCSANDBOX_BROKER_CLI_TERM_H_
#define CCSANDBOX_BROKER_CLI_TERM_H_

#include <string>
#include <vector>

#include "proto/sandbox.grpc.pb.h"

namespace ccsandbox::broker {

struct TermFlags {
  std::string backend;            // "" = the broker's terminal default (none)
  std::string workdir;            // "" = the broker user's $HOME
  std::vector<std::string> argv;  // "" = the login shell
};

int RunTerm(v1::SandboxBroker::Stub& stub, const TermFlags& flags);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_TERM_H_
