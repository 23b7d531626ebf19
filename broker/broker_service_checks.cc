// BrokerService's checks before a session starts, shared by Launch and RenderPlan: the backend
// and the spec it runs (checked), the filename policy, the deny scan over the host and the
// create guard's plan. Nothing here starts anything.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "base/real_host_view.h"
#include "broker/broker_service.h"
#include "broker/deny_scan.h"
#include "broker/launcher_health.h"
#include "broker/microvm/runtime.h"
#include "broker/spec_paths.h"
#include "policy/egress/allowlist.h"
#include "policy/plan/create_guard_rules.h"
#include "policy/plan/deny_sets.h"
#include "policy/plan/filename_policy.h"
#include "policy/plan/input_limits.h"
#include "policy/plan/launch_plan.h"
#include "policy/plan/spec_validation.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {
namespace {

// The spec, checked for the session's actual backend: its fields, its paths (a bind into the
// control plane is refused) and its egress allowlist.
absl::Status CheckLaunchSpec(const v1::SandboxSpec& spec, v1::SandboxBackend backend,
                             const policy::ForbiddenDirs& forbidden_dirs) {
  if (absl::Status valid = policy::ValidateSpec(spec, backend); !valid.ok()) return valid;
  if (spec.has_resources() && backend != v1::SANDBOX_BACKEND_NATIVE) {
    return absl::InvalidArgumentError(
        "resources: only the native backend's sandboxes are limited; this session runs on "
        "the host unconfined");
  }
  if (absl::Status valid = CheckSpecPaths(spec, backend, forbidden_dirs); !valid.ok()) {
    spdlog::warn("session {} refused: {}", spec.session_id(), std::string(valid.message()));
    return valid;
  }
  return policy::ValidateEgressAllowlist(spec.egress_allowlist());
}

}  // namespace

absl::StatusOr<BrokerService::CheckedLaunch> BrokerService::CheckLaunch(
    const v1::LaunchRequest& request) {
  absl::StatusOr<policy::BackendChoice> choice =
      policy::SelectBackend(request.backend(), config_.host);
  if (!choice.ok()) return choice.status();
  if (choice->actual == v1::SANDBOX_BACKEND_MICROVM && config_.microvm_runtime == nullptr) {
    // Only the microVM runtime may start it; never a native or none session labelled microvm.
    absl::StatusOr<std::unique_ptr<microvm::Guest>> guest =
        microvm::MakeRuntime(config_.host.microvm)->Start({.spec = request.spec()});
    if (!guest.ok()) return guest.status();
    (void)(*guest)->Stop(absl::ZeroDuration());
    return absl::UnimplementedError("backend: microvm: the broker cannot run a microVM session");
  }
  absl::StatusOr<v1::SandboxSpec> spec = WorkspaceSpec(request);
  if (!spec.ok()) return spec.status();
  if (absl::Status valid =
          CheckLaunchSpec(*spec, HostBackend(choice->actual), config_.forbidden_dirs);
      !valid.ok()) {
    return valid;
  }
  return CheckedLaunch{*std::move(choice), *std::move(spec)};
}

absl::StatusOr<BrokerService::SessionPolicy> BrokerService::DecideSessionPolicy(
    const v1::SandboxSpec& spec, v1::SandboxBackend backend) {
  absl::StatusOr<policy::FilenamePolicyDecision> filenames = DecideFilenames(spec, backend);
  if (!filenames.ok()) return filenames.status();
  absl::StatusOr<policy::DenyPaths> deny = SessionDenyPaths(spec, backend);
  if (!deny.ok()) return deny.status();
  if (backend == v1::SANDBOX_BACKEND_NATIVE) {
    if (absl::Status pinned = ConfirmDataDirBinds(spec, *deny); !pinned.ok()) {
      spdlog::warn("session {} refused: {}", spec.session_id(), std::string(pinned.message()));
      return pinned;
    }
  }
  std::optional<v1::CreateGuardPlan> guard_plan =
      policy::GuardPlanFor(spec, *filenames, home_dirs_, *deny);
  return SessionPolicy{*std::move(filenames), *std::move(deny), std::move(guard_plan)};
}

absl::StatusOr<v1::SandboxSpec> BrokerService::WorkspaceSpec(const v1::LaunchRequest& request) {
  v1::SandboxSpec spec = request.spec();
  if (request.has_dispatch()) {
    if (config_.workspaces == nullptr) {
      return absl::FailedPreconditionError(
          "dispatch: this broker keeps no workspaces; start it with --data-dir=DIR");
    }
    v1::WorkspaceDispatch dispatch = request.dispatch();
    if (dispatch.workspace_id().empty()) dispatch.set_workspace_id(spec.workspace_id());
    if (!spec.workspace_id().empty() && spec.workspace_id() != dispatch.workspace_id()) {
      return absl::InvalidArgumentError(
          "dispatch.workspaceId: differs from spec.workspaceId; give one, or the same");
    }
    if (spec.bind_mounts_size() > 0) {
      return absl::InvalidArgumentError(
          "bindMounts: must be empty with a dispatch; the dispatch decides what is bound");
    }
    // Exactly the dispatch's binds: a runner state directory would be one more writable mount.
    if (spec.runner_state_dirs_size() > 0) {
      return absl::InvalidArgumentError(
          "runnerStateDirs: must be empty with a dispatch; the dispatch decides what is writable "
          "(the agent's config directory is read-only)");
    }
    absl::StatusOr<v1::DispatchPlan> plan = config_.workspaces->PlanDispatch(dispatch);
    if (!plan.ok()) {
      return absl::Status(plan.status().code(), absl::StrCat("dispatch.", plan.status().message()));
    }
    spec.set_workspace_id(dispatch.workspace_id());
    *spec.mutable_bind_mounts() = plan->bind_mounts();
    if (!spec.has_guest_workdir()) spec.set_guest_workdir(plan->workdir());
  }
  if (config_.workspaces != nullptr && !spec.workspace_id().empty()) {
    // Agents work in clones; the registered checkouts are never writable, in any mode.
    absl::StatusOr<std::vector<std::string>> registered =
        config_.workspaces->registry().ProtectedPaths(spec.workspace_id());
    if (!registered.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("workspaceId: cannot read the workspace's registered repositories: ",
                       registered.status().message()));
    }
    for (const std::string& path : *registered) {
      if (std::find(spec.protected_paths().begin(), spec.protected_paths().end(), path) ==
          spec.protected_paths().end()) {
        spec.add_protected_paths(path);
      }
    }
  }
  return spec;
}

absl::Status BrokerService::ConfirmDataDirBinds(const v1::SandboxSpec& spec,
                                                const policy::DenyPaths& deny) const {
  if (config_.workspaces == nullptr) return absl::OkStatus();
  const std::string& data_dir = config_.workspaces->data_dir().path();
  std::vector<std::pair<const char*, const std::string*>> paths;
  for (const v1::SandboxBindMount& bind : spec.bind_mounts()) {
    paths.emplace_back("bindMounts", &bind.host_path());
  }
  for (const std::string& dir : spec.runner_state_dirs())
    paths.emplace_back("runnerStateDirs", &dir);
  for (const auto& [field, path] : paths) {
    if (!IsUnderOrEqual(*path, data_dir)) continue;
    auto pinned = deny.bind_ids.find(*path);
    // Unpinned, the launcher would bind whatever the path names when it opens it.
    if (pinned == deny.bind_ids.end() || pinned->second.ino == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          field, ": '", *path, "' was gone when the session was launched: not starting"));
    }
    if (absl::Status same =
            config_.workspaces->ConfirmPinned(*path, pinned->second.dev, pinned->second.ino);
        !same.ok()) {
      return absl::Status(same.code(), absl::StrCat(field, ": ", same.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<policy::FilenamePolicyDecision> BrokerService::DecideFilenames(
    const v1::SandboxSpec& spec, v1::SandboxBackend backend) {
  // Every writable native session needs the guard: the trusted-name rules always apply.
  const bool guard_matters =
      backend == v1::SANDBOX_BACKEND_NATIVE && policy::HasWritableMount(spec);
  const CreateGuardState guard = guard_matters ? CurrentCreateGuard() : CreateGuardState();
  if (guard_matters && !guard.known) {
    // An outage, not a policy question: never answered with advice to weaken the policy.
    std::string why = LauncherUnreachable(config_.launcher_address);
    if (why.empty())
      why = absl::StrCat("launcher at ", config_.launcher_address, ": ", guard.reason);
    spdlog::warn("session {} refused: {}", spec.session_id(), why);
    return absl::UnavailableError(why);
  }
  absl::StatusOr<policy::FilenamePolicyDecision> filenames =
      policy::DecideFilenamePolicy(spec, backend, guard.available);
  if (!filenames.ok() && guard_matters) {
    filenames =
        absl::Status(filenames.status().code(),
                     absl::StrCat(filenames.status().message(), " [launcher: ", guard.reason, "]"));
  }
  if (!filenames.ok()) {
    spdlog::warn("session {} refused: {}", spec.session_id(),
                 std::string(filenames.status().message()));
  }
  return filenames;
}

absl::StatusOr<policy::DenyPaths> BrokerService::SessionDenyPaths(const v1::SandboxSpec& spec,
                                                                  v1::SandboxBackend backend) {
  if (backend != v1::SANDBOX_BACKEND_NATIVE) return policy::DenyPaths();
  absl::StatusOr<policy::DenyPaths> resolved = ResolveDenyPaths(spec);
  if (!resolved.ok()) return resolved.status();
  // Host file names travel in every plan: one that is not UTF-8 could not reach the launcher.
  for (const auto& [field, paths] : {std::pair{"denyReadPaths", &resolved->read},
                                     std::pair{"denyWritePaths", &resolved->write}}) {
    if (absl::Status valid = policy::CheckHostPaths(field, *paths); !valid.ok()) {
      spdlog::warn("session {} refused: {}", spec.session_id(), std::string(valid.message()));
      return valid;
    }
  }
  return resolved;
}

absl::StatusOr<policy::DenyPaths> BrokerService::ResolveDenyPaths(const v1::SandboxSpec& spec) {
  absl::StatusOr<policy::Mode> mode = policy::ParseMode(spec.mode());
  if (!mode.ok()) return mode.status();
  ScanRequest request;
  request.mounts = policy::PlanMounts(spec, *mode);
  request.runner_state_dirs.assign(spec.runner_state_dirs().begin(),
                                   spec.runner_state_dirs().end());
  request.protected_paths.assign(spec.protected_paths().begin(), spec.protected_paths().end());
  request.home_dirs = home_dirs_;
  request.filename_deny_patterns = policy::EffectiveFilenameDenyPatterns(spec);
  request.extra_trusted_names.assign(spec.deny_write_names().begin(),
                                     spec.deny_write_names().end());
  request.connectable_sockets.assign(spec.connectable_sockets().begin(),
                                     spec.connectable_sockets().end());
  absl::StatusOr<policy::DenyScan> scan = ScanForDenyPaths(request);
  if (!scan.ok()) return scan.status();
  return policy::ResolveDenyPaths(*scan, RealPathResolver());
}

}  // namespace ccsandbox::broker
