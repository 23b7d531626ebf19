// The SandboxWorkspace service (proto/workspace.proto): registering workspaces' repositories,
// provisioning conversations' copy-on-write worktrees and agents' directories, teardown, and the
// dispatch plans Launch uses. Without --data-dir every method is FAILED_PRECONDITION, saying so.
//
//   WorkspaceService workspace_service(workspaces, [&](const std::string& dir) {
//     return broker_service.SessionsBinding(dir);
//   });
//   builder.RegisterService(&workspace_service);
#ifndef CCSANDBOX_BROKER_WORKSPACE_SERVICE_H_
#define CCSANDBOX_BROKER_WORKSPACE_SERVICE_H_

#include <functional>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "proto/workspace.grpc.pb.h"
#include "workspace/workspaces.h"

namespace ccsandbox::broker {

class WorkspaceService final : public v1::SandboxWorkspace::Service {
 public:
  using SessionsUsing = std::function<std::vector<std::string>(const std::string& dir)>;
  // `workspaces` (null: no --data-dir) outlives the service; `sessions_using` names the live
  // sessions binding a directory (Teardown refuses while there are any).
  WorkspaceService(workspace::Workspaces* workspaces, SessionsUsing sessions_using)
      : workspaces_(workspaces), sessions_using_(std::move(sessions_using)) {}

  grpc::Status RegisterWorkspace(grpc::ServerContext*, const v1::Workspace* request,
                                 v1::Workspace* response) override;
  grpc::Status GetWorkspace(grpc::ServerContext*, const v1::WorkspaceRequest* request,
                            v1::Workspace* response) override;
  grpc::Status ProvisionConversation(grpc::ServerContext*, const v1::ProvisionRequest* request,
                                     v1::Conversation* response) override;
  grpc::Status GetConversation(grpc::ServerContext*, const v1::ConversationRequest* request,
                               v1::Conversation* response) override;
  grpc::Status TeardownConversation(grpc::ServerContext*, const v1::ConversationRequest* request,
                                    v1::TeardownResponse* response) override;
  grpc::Status PlanDispatch(grpc::ServerContext*, const v1::WorkspaceDispatch* request,
                            v1::DispatchPlan* response) override;

 private:
  workspace::Workspaces* const workspaces_;
  const SessionsUsing sessions_using_;
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_WORKSPACE_SERVICE_H_
