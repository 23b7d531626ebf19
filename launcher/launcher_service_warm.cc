// LauncherService's warm-sandbox RPCs: StartSandbox (a session's sandbox, held for its life),
// a Run inside it (RunInSandbox), and Freeze.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "launcher/create_guard/notify_channel.h"
#include "launcher/launcher_service.h"
#include "launcher/run_environment.h"
#include "launcher/usage_proto.h"
#include "policy/plan/input_limits.h"
#include "policy/plan/plan_validation.h"
#include "proto/grpc_status.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::launcher {

grpc::Status LauncherService::RunInSandbox(grpc::ServerContext* context, const v1::LaunchPlan* plan,
                                           grpc::ServerWriter<v1::SandboxEvent>* writer) {
  // Sizes first: the sandbox id is looked up (and quoted) only once it is bounded; then the
  // whole plan, its workdir against the mounts the sandbox has.
  absl::Status valid = policy::CheckPlanLimits(*plan);
  std::optional<WarmSandboxes::Entry> sandbox;
  if (valid.ok()) {
    absl::StatusOr<WarmSandboxes::Entry> found = warm_.Find(plan->sandbox_id());
    if (!found.ok()) return ToGrpc(found.status());
    sandbox = *std::move(found);
    policy::PlanLimits limits;
    limits.sandbox_mounts = &sandbox->plan.mounts();
    valid = policy::ValidatePlan(*plan, limits);
  }
  if (!valid.ok()) {
    spdlog::warn("run {} from uid {} refused: {}", plan->run_id(), peer_uid_,
                 std::string(valid.message()));
    return ToGrpc(valid);
  }
  // The run's own environment, with the sandbox's egress wiring.
  v1::LaunchPlan with_egress = *plan;
  if (sandbox->plan.has_egress()) *with_egress.mutable_egress() = sandbox->plan.egress();
  absl::StatusOr<std::map<std::string, std::string>> env = RunEnvironment(with_egress);
  if (!env.ok()) return ToGrpc(env.status());
  std::vector<std::string> envp;
  for (const auto& [name, value] : *env) envp.push_back(absl::StrCat(name, "=", value));
  UniqueFd guard_launcher, guard_shim;
  if (sandbox->plan.has_create_guard()) {
    absl::StatusOr<std::pair<UniqueFd, UniqueFd>> channel = NotifyChannelPair();
    if (!channel.ok()) return ToGrpc(channel.status());
    guard_launcher = std::move(channel->first);
    guard_shim = std::move(channel->second);
  }
  absl::StatusOr<RegisteredRun> run = registry_.Register(plan->run_id(), peer_uid_);
  if (!run.ok()) return ToGrpc(run.status());
  GrpcSink sink(context, writer, *plan, config_.stream_stall_limit);
  EmitStarting(*plan, sink);
  absl::StatusOr<std::unique_ptr<WarmExec>> exec = sandbox->sandbox->StartExec(
      {plan->argv().begin(), plan->argv().end()}, envp, plan->workdir(), std::move(guard_shim));
  if (!exec.ok()) {
    spdlog::error("run {}: {}", plan->run_id(), std::string(exec.status().message()));
    return ToGrpc(exec.status());
  }
  const pid_t pid = (*exec)->pid().value_or(0);
  std::function<std::optional<CgroupUsage>()> usage;
  if (const WarmExec* warm = exec->get(); warm->cgroup() != nullptr) {
    usage = [warm] { return warm->Usage(); };
  }
  return SuperviseStarted(*plan, sandbox->plan, *std::move(exec), pid, std::move(guard_launcher),
                          run->control(), sink, std::move(usage));
}

grpc::Status LauncherService::StartSandbox(grpc::ServerContext* context, const v1::LaunchPlan* plan,
                                           grpc::ServerWriter<v1::SandboxLifecycle>* writer) {
  SpawnFds fds;
  absl::StatusOr<ProcessSpec> spec = AdmitRun(*plan, fds, /*warm=*/true);
  if (!spec.ok()) return ToGrpc(spec.status());
  absl::StatusOr<std::unique_ptr<SandboxProcess>> process = SandboxProcess::Spawn(*spec);
  if (!process.ok()) {
    spdlog::error("sandbox {}: {}", plan->run_id(), std::string(process.status().message()));
    return ToGrpc(process.status());
  }
  fds.init_shim.Reset();  // only the init holds its end now
  fds.seccomp.Reset();
  auto sandbox = std::make_shared<WarmSandbox>(plan->run_id(), *std::move(process),
                                               std::move(fds.init_launcher), std::move(fds.cgroup));
  if (absl::Status added = warm_.Add(plan->run_id(), {sandbox, *plan}); !added.ok()) {
    return ToGrpc(added);
  }
  absl::Cleanup forget = [this, plan] { warm_.Remove(plan->run_id()); };
  // Signal naming the sandbox stops it (the broker's Destroy).
  absl::StatusOr<RegisteredRun> registered = registry_.Register(plan->run_id(), peer_uid_);
  if (!registered.ok()) return ToGrpc(registered.status());
  WarmSandbox::Hooks hooks;
  hooks.on_ready = [&](pid_t pid) {
    v1::SandboxLifecycle warm;
    warm.mutable_warm()->set_pid(pid);
    warm.mutable_warm()->set_limits(fds.limits);
    writer->Write(warm);
    spdlog::info("sandbox {} warm: uid {}, pid {}", plan->run_id(), peer_uid_, pid);
  };
  // The session's counters after each Exec, for its handle.
  hooks.on_exec_ended = [&] {
    if (std::optional<CgroupUsage> usage = sandbox->Usage()) {
      v1::SandboxLifecycle message;
      *message.mutable_usage() = UsageProto(*usage);
      writer->Write(message);
    }
  };
  const std::string reason =
      sandbox->Serve([context] { return context->IsCancelled(); }, registered->control(), hooks);
  spdlog::info("sandbox {} ended: {}", plan->run_id(), reason);
  if (!sandbox->was_ready()) {
    return ToGrpc(
        absl::FailedPreconditionError(absl::StrCat("the sandbox did not start: ", reason)));
  }
  if (!context->IsCancelled()) {
    v1::SandboxLifecycle ended;
    ended.mutable_ended()->set_reason(reason);
    writer->Write(ended);
  }
  return grpc::Status::OK;
}

grpc::Status LauncherService::Freeze(grpc::ServerContext*, const v1::FreezeRequest* request,
                                     v1::FreezeResponse*) {
  absl::StatusOr<WarmSandboxes::Entry> sandbox = warm_.Find(request->sandbox_id());
  if (!sandbox.ok()) return ToGrpc(sandbox.status());
  absl::Status frozen = sandbox->sandbox->Freeze(request->frozen());
  spdlog::info("sandbox {} {}: {}", request->sandbox_id(), request->frozen() ? "frozen" : "thawed",
               frozen.ok() ? "done" : std::string(frozen.message()));
  return ToGrpc(frozen);
}

}  // namespace ccsandbox::launcher
