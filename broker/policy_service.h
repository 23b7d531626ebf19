// The SandboxPolicy service (proto/policy.proto): the mode's command policy, the action
// guardrails and path confinement from policy/, served by the broker so every server component
// and `sandboxctl policy check` asks the same rules. Stateless and thread-safe; only ConfinePath
// looks at the file system, through the HostView it was given.
//
//   PolicyService policy_service;  // the real file system
//   builder.RegisterService(&policy_service);
//
// Bad requests (unknown mode or effect, a rule that does not parse, an empty path …) are
// INVALID_ARGUMENT naming the field in proto3 JSON spelling ("effects[1].effect: …"); a
// refused path keeps ConfinePath's code (PERMISSION_DENIED, NOT_FOUND, FAILED_PRECONDITION).
#ifndef CCSANDBOX_BROKER_POLICY_SERVICE_H_
#define CCSANDBOX_BROKER_POLICY_SERVICE_H_

#include "base/host_view.h"
#include "base/real_host_view.h"
#include "grpcpp/grpcpp.h"
#include "proto/policy.grpc.pb.h"
#include "workspace/workspaces.h"

namespace ccsandbox::broker {

class PolicyService final : public v1::SandboxPolicy::Service {
 public:
  // Confines paths on the real file system; a request's dispatch is planned by `workspaces`
  // (null: no --data-dir, a dispatch is FAILED_PRECONDITION), which must outlive the service.
  explicit PolicyService(workspace::Workspaces* workspaces = nullptr);
  // Confines paths on `host_view`, which must outlive the service.
  explicit PolicyService(const HostView& host_view);

  grpc::Status EvaluateCommand(grpc::ServerContext*, const v1::EvaluateCommandRequest* request,
                               v1::CommandDecision* decision) override;
  grpc::Status ResolveAction(grpc::ServerContext*, const v1::ResolveActionRequest* request,
                             v1::GuardrailDecision* decision) override;
  grpc::Status ConfinePath(grpc::ServerContext*, const v1::ConfinePathRequest* request,
                           v1::ConfinedPath* confined) override;

 private:
  const RealHostView real_view_;
  const HostView& host_view_;
  workspace::Workspaces* const workspaces_ = nullptr;
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_POLICY_SERVICE_H_
