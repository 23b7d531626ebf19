// The run's git credential helper, a mode of the shim (`/run/ccsandbox/shim --git-credential=PORT
// get`, set by the run's git configuration for the session's repositories): it passes git's
// request (protocol, host, path) to the session's push gateway on 127.0.0.1:PORT and prints what
// the gateway answers — a read credential scoped to that repository, minted for the session and
// revoked when it ends. It never holds a credential that can push; `store` and `erase` do
// nothing.
#ifndef CCSANDBOX_LAUNCHER_SHIM_GIT_CREDENTIAL_H_
#define CCSANDBOX_LAUNCHER_SHIM_GIT_CREDENTIAL_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ccsandbox::launcher {

inline constexpr char kGitCredentialFlag[] = "--git-credential=";

// What the helper prints for the gateway's answer to its request (the whole HTTP response, read
// to the connection's end): the body of a "200" response, git's "key=value" lines; "" for
// anything else, and git then goes on without a credential.
std::string CredentialAnswer(absl::string_view response);

// Runs the helper: `port_text` the gateway's port, `operation` git's (get, store, erase).
// Returns the exit code (0 also when there is no credential: git then goes on without one).
int RunGitCredentialHelper(const std::string& port_text, const std::string& operation);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SHIM_GIT_CREDENTIAL_H_
