#include "broker/cli_session.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "broker/cli_exit.h"
#include "broker/cli_json.h"
#include "policy/plan/input_limits.h"

namespace ccsandbox::broker {
namespace {

// The failure of a call about `session_id`: NOT_FOUND names the session, the rest say why.
int FailCall(const std::string& what, const grpc::Status& status, const std::string& session_id) {
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    return Fail(absl::StrCat(what, ": ", NoSessionMessage(session_id)), kNotFoundError);
  }
  return Fail(absl::StrCat(what, ": ", status.error_message()));
}

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(10);
}

int Start(v1::SandboxBroker::Stub& stub, const SessionCommand&, const LaunchFlags& flags,
          bool json) {
  absl::StatusOr<std::string> workdir = ResolveWorkdir(flags.workdir);
  if (!workdir.ok()) return Fail(absl::StrCat("session start: ", workdir.status().message()));
  absl::StatusOr<v1::LaunchRequest> launch = BuildLaunchRequest(flags, *workdir);
  if (!launch.ok()) return Fail(absl::StrCat("session start: ", launch.status().message()));
  absl::StatusOr<v1::SandboxHandle> handle = LaunchSession(stub, *launch, json);
  if (!handle.ok()) return Fail(absl::StrCat("session start: ", handle.status().message()));
  std::cout << (json ? HandleJson(*handle) : handle->session_id()) << std::endl;
  return 0;
}

int List(v1::SandboxBroker::Stub& stub, const SessionCommand&, const LaunchFlags&, bool json) {
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::ListSessionsResponse response;
  grpc::Status status = stub.ListSessions(&ctx, v1::ListSessionsRequest(), &response);
  if (!status.ok()) return Fail(absl::StrCat("session ls: ", status.error_message()));
  std::vector<v1::SandboxHandle> sessions(response.sessions().begin(), response.sessions().end());
  if (json) {
    for (const v1::SandboxHandle& handle : sessions) std::cout << HandleJson(handle) << "\n";
  } else {
    std::cout << FormatSessionLines(sessions);
  }
  std::cout << std::flush;
  return 0;
}

using SessionCall = grpc::Status (v1::SandboxBroker::Stub::*)(grpc::ClientContext*,
                                                              const v1::SessionRequest&,
                                                              v1::SandboxHandle*);

// One call on one session; prints its handle (as `show` does, or one JSON line), unless
// `plain_handle` is false and --json is not given.
int CallOnSession(v1::SandboxBroker::Stub& stub, const SessionCommand& command, bool json,
                  SessionCall call, bool plain_handle) {
  const std::string what = absl::StrCat("session ", command.verb);
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::SessionRequest request;
  request.set_session_id(command.session_id);
  v1::SandboxHandle handle;
  grpc::Status status = (stub.*call)(&ctx, request, &handle);
  if (!status.ok()) return FailCall(what, status, command.session_id);
  if (json) {
    std::cout << HandleJson(handle) << std::endl;
  } else if (plain_handle) {
    std::cout << FormatSessionHandle(handle) << std::flush;
  }
  return 0;
}

struct Verb {
  absl::string_view name;
  // Either a verb of its own ...
  int (*run)(v1::SandboxBroker::Stub&, const SessionCommand&, const LaunchFlags&, bool json);
  // ... or one call on the named session, its handle printed (or only with --json).
  SessionCall call;
  bool plain_handle;
};

constexpr Verb kVerbs[] = {
    {"start", Start, nullptr, false},
    {"ls", List, nullptr, false},
    {"show", nullptr, &v1::SandboxBroker::Stub::GetSession, true},
    {"stop", nullptr, &v1::SandboxBroker::Stub::Destroy, false},
    {"suspend", nullptr, &v1::SandboxBroker::Stub::Suspend, true},
    {"resume", nullptr, &v1::SandboxBroker::Stub::Resume, true},
};

const Verb* FindVerb(absl::string_view name) {
  for (const Verb& verb : kVerbs) {
    if (verb.name == name) return &verb;
  }
  return nullptr;
}

}  // namespace

std::string BackendText(v1::SandboxBackend backend) {
  return absl::AsciiStrToLower(
      absl::StripPrefix(v1::SandboxBackend_Name(backend), "SANDBOX_BACKEND_"));
}

std::string StateText(v1::SandboxState state) {
  return absl::AsciiStrToLower(absl::StripPrefix(v1::SandboxState_Name(state), "SANDBOX_STATE_"));
}

std::string FormatSessionLines(const std::vector<v1::SandboxHandle>& sessions) {
  size_t id_width = 0, backend_width = 0;
  for (const v1::SandboxHandle& handle : sessions) {
    id_width = std::max(id_width, handle.session_id().size());
    backend_width = std::max(backend_width, BackendText(handle.backend()).size());
  }
  std::string out;
  for (const v1::SandboxHandle& handle : sessions) {
    const std::string backend = BackendText(handle.backend());
    absl::StrAppend(&out, handle.session_id(),
                    std::string(id_width - handle.session_id().size() + 2, ' '), backend,
                    std::string(backend_width - backend.size() + 2, ' '), StateText(handle.state()),
                    "\n");
  }
  return out;
}

std::string FormatSessionHandle(const v1::SandboxHandle& handle) {
  std::string out =
      absl::StrCat("session: ", handle.session_id(), "\n", "state: ", StateText(handle.state()),
                   "\n", "backend: ", BackendText(handle.backend()),
                   " (requested: ", BackendText(handle.requested_backend()), ")\n");
  if (handle.has_error()) {
    absl::StrAppend(&out, "error: ", handle.error().code(), ": ", handle.error().message(), "\n");
  }
  if (!handle.details().fields().empty()) {
    absl::StrAppend(&out, "details:\n");
    const std::map<std::string, google::protobuf::Value> sorted(handle.details().fields().begin(),
                                                                handle.details().fields().end());
    for (const auto& [key, value] : sorted) {
      absl::StrAppend(&out, "  ", key, ": ",
                      value.has_string_value() ? value.string_value() : JsonLine(value), "\n");
    }
  }
  return out;
}

std::string HandleJson(const v1::SandboxHandle& handle) { return JsonLine(handle); }

std::string NoSessionMessage(const std::string& session_id) {
  return absl::StrCat("no session ", policy::QuoteInput(session_id),
                      ": it was stopped or never started (sandboxctl session ls lists the "
                      "sessions)");
}

int RunSessionCommand(v1::SandboxBroker::Stub& stub, const SessionCommand& command,
                      const LaunchFlags& launch, bool json) {
  const Verb* verb = FindVerb(command.verb);
  if (verb == nullptr) {
    return Fail(absl::StrCat("session: unknown verb ", policy::QuoteInput(command.verb)));
  }
  if (verb->run != nullptr) return verb->run(stub, command, launch, json);
  return CallOnSession(stub, command, json, verb->call, verb->plain_handle);
}

}  // namespace ccsandbox::broker
