// BrokerService's Suspend and Resume: a native session's sandbox frozen and thawed through the
// launcher's Freeze (docs/resources.md "Suspend and resume").
#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "broker/broker_service.h"
#include "proto/grpc_status.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {

grpc::Status BrokerService::Suspend(grpc::ServerContext*, const v1::SessionRequest* request,
                                    v1::SandboxHandle* handle) {
  return FreezeSession(request->session_id(), true, handle);
}

grpc::Status BrokerService::Resume(grpc::ServerContext*, const v1::SessionRequest* request,
                                   v1::SandboxHandle* handle) {
  return FreezeSession(request->session_id(), false, handle);
}

grpc::Status BrokerService::FreezeSession(const std::string& session_id, bool frozen,
                                          v1::SandboxHandle* handle) {
  absl::StatusOr<SessionTable::RunStart> start = sessions_.Plan(session_id);
  if (!start.ok()) return ToGrpc(start.status());
  absl::StatusOr<v1::SandboxHandle> now = sessions_.Get(session_id);
  if (!now.ok()) return ToGrpc(now.status());
  if (start->sandbox_id.empty()) {
    return ToGrpc(absl::UnimplementedError(
        "sessionId: only a native session's sandbox can be suspended (this one runs each Exec "
        "as a process of its own)"));
  }
  if (now->state() == v1::SANDBOX_STATE_ERROR) {
    return ToGrpc(absl::FailedPreconditionError(absl::StrCat(
        "sessionId: session '", session_id, "' is in error: ", now->error().message())));
  }
  if ((now->state() == v1::SANDBOX_STATE_SUSPENDED) == frozen) {  // already so
    *handle = *now;
    return grpc::Status::OK;
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::FreezeRequest request;
  request.set_sandbox_id(start->sandbox_id);
  request.set_frozen(frozen);
  v1::FreezeResponse response;
  if (grpc::Status done = launcher_.stub->Freeze(&ctx, request, &response); !done.ok()) {
    spdlog::warn("session {}: {} failed: {}", session_id, frozen ? "suspend" : "resume",
                 done.error_message());
    return done;
  }
  sessions_.SetSuspended(session_id, frozen);
  spdlog::info("session {} {}", session_id, frozen ? "suspended" : "resumed");
  absl::StatusOr<v1::SandboxHandle> after = sessions_.Get(session_id);
  if (!after.ok()) return ToGrpc(after.status());
  *handle = *after;
  return grpc::Status::OK;
}

}  // namespace ccsandbox::broker
