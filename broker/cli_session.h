// `sandboxctl session`: sessions that outlive one command, kept by the broker until stopped.
//
//   ID=$(sandboxctl session start [--spec=FILE.json] [--workdir=DIR] [--backend=NAME]
//                                 [--no-filename-denies] [--json])
//   sandboxctl run --session=$ID -- make test      (sandboxctl.cc: Exec only, never Launch/Destroy)
//   sandboxctl session ls [--json]
//   sandboxctl session show $ID [--json]
//   sandboxctl session stop $ID [--json]
//   sandboxctl session suspend|resume $ID [--json]   (freeze / thaw its sandbox)
//
// start prints the session id (or, with --json, the SandboxHandle as one JSON line); ls one line
// per session: id, actual backend, state (--json: one handle per line); show the handle as
// "key: value" lines; stop prints nothing (--json: the final handle, state destroyed).
// Exit codes: 0 on success, 125 (cli_exit.h) on every failure, an unknown session included,
// with a one-line message on stderr. Usage errors are cli_parse.h's.
#ifndef CCSANDBOX_BROKER_CLI_SESSION_H_
#define CCSANDBOX_BROKER_CLI_SESSION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "broker/cli_launch.h"
#include "proto/sandbox.grpc.pb.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

// A `session` form as cli_parse.h checked it.
struct SessionCommand {
  std::string verb;        // start, ls, show, stop, suspend, resume
  std::string session_id;  // all but start and ls
};

// "native", "none", "microvm"; "warm", "active", "destroyed", ... (the enum names, lower case).
std::string BackendText(v1::SandboxBackend backend);
std::string StateText(v1::SandboxState state);

// `session ls`: "ID  BACKEND  STATE\n" per session, the ids padded to one width; "" for none.
std::string FormatSessionLines(const std::vector<v1::SandboxHandle>& sessions);

// `session show`, one "key: value" per line:
//   session: cli-1-0a1b2c3d
//   state: warm
//   backend: native (requested: unspecified)
//   error: FAILED_PRECONDITION: …            (only when set)
//   details:                                 (sorted by key; strings as they are, else JSON)
//     backendNote: bubblewrap …
std::string FormatSessionHandle(const v1::SandboxHandle& handle);

// One line of proto3 JSON (fields at their defaults included).
std::string HandleJson(const v1::SandboxHandle& handle);

// The message for a session the broker does not have (NOT_FOUND), naming it.
std::string NoSessionMessage(const std::string& session_id);

// Runs `command` against the broker; prints to stdout / stderr and returns the exit code.
// `launch` shapes the session `start` asks for.
int RunSessionCommand(v1::SandboxBroker::Stub& stub, const SessionCommand& command,
                      const LaunchFlags& launch, bool json);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_SESSION_H_
