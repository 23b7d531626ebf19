#include "broker/workspace_service.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "proto/grpc_status.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {
namespace {

grpc::Status NoDataDir() {
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "this broker keeps no workspaces; start it with --data-dir=DIR on a file "
                      "system with reflink (XFS with reflink=1, btrfs)");
}

template <typename T>
grpc::Status Reply(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpc(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status WorkspaceService::RegisterWorkspace(grpc::ServerContext*, const v1::Workspace* request,
                                                 v1::Workspace* response) {
  if (workspaces_ == nullptr) return NoDataDir();
  absl::StatusOr<v1::Workspace> stored = workspaces_->registry().Register(*request);
  if (stored.ok()) {
    spdlog::info("workspace {} registered: {} repositories", stored->workspace_id(),
                 stored->repositories_size());
  }
  return Reply(std::move(stored), response);
}

grpc::Status WorkspaceService::GetWorkspace(grpc::ServerContext*,
                                            const v1::WorkspaceRequest* request,
                                            v1::Workspace* response) {
  if (workspaces_ == nullptr) return NoDataDir();
  return Reply(workspaces_->registry().Get(request->workspace_id()), response);
}

grpc::Status WorkspaceService::ProvisionConversation(grpc::ServerContext*,
                                                     const v1::ProvisionRequest* request,
                                                     v1::Conversation* response) {
  if (workspaces_ == nullptr) return NoDataDir();
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::Conversation> conversation = workspaces_->conversations().Provision(*request);
  if (!conversation.ok()) {
    spdlog::warn("conversation {}/{} not provisioned: {}", request->workspace_id(),
                 request->conversation_id(), std::string(conversation.status().message()));
    return ToGrpc(conversation.status());
  }
  int cloned = 0;
  uint64_t files = 0;
  for (const v1::ProvisionedRepository& repo : conversation->repositories()) {
    if (!repo.cloned_now()) continue;
    ++cloned;
    files += repo.files();
    if (repo.skipped_size() > 0) {
      spdlog::warn("conversation {}/{}: clone of {} left out {} entries (sockets, devices): {}",
                   request->workspace_id(), request->conversation_id(), repo.name(),
                   repo.skipped_size(), absl::StrJoin(repo.skipped(), ", "));
    }
  }
  spdlog::info("conversation {}/{} provisioned: {} repositories cloned ({} files) in {}; {} agents",
               request->workspace_id(), request->conversation_id(), cloned, files,
               absl::FormatDuration(absl::Now() - start), conversation->agents_size());
  *response = *std::move(conversation);
  return grpc::Status::OK;
}

grpc::Status WorkspaceService::GetConversation(grpc::ServerContext*,
                                               const v1::ConversationRequest* request,
                                               v1::Conversation* response) {
  if (workspaces_ == nullptr) return NoDataDir();
  return Reply(
      workspaces_->conversations().Get(request->workspace_id(), request->conversation_id()),
      response);
}

grpc::Status WorkspaceService::TeardownConversation(grpc::ServerContext*,
                                                    const v1::ConversationRequest* request,
                                                    v1::TeardownResponse* response) {
  if (workspaces_ == nullptr) return NoDataDir();
  absl::StatusOr<v1::TeardownResponse> removed =
      workspaces_->conversations().Teardown(*request, sessions_using_);
  if (removed.ok() && removed->removed_size() > 0) {
    spdlog::info("conversation {}/{}{} torn down", request->workspace_id(),
                 request->conversation_id(),
                 request->has_agent_id() ? absl::StrCat(" agent ", request->agent_id()) : "");
  }
  return Reply(std::move(removed), response);
}

grpc::Status WorkspaceService::PlanDispatch(grpc::ServerContext*,
                                            const v1::WorkspaceDispatch* request,
                                            v1::DispatchPlan* response) {
  if (workspaces_ == nullptr) return NoDataDir();
  return Reply(workspaces_->PlanDispatch(*request), response);
}

}  // namespace ccsandbox::broker
