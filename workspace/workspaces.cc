#include "workspace/workspaces.h"

#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "policy/plan/dispatch_binds.h"

namespace ccsandbox::workspace {

absl::StatusOr<std::unique_ptr<Workspaces>> Workspaces::Open(const std::string& data_dir) {
  absl::StatusOr<std::unique_ptr<DataDir>> data = DataDir::Open(data_dir);
  if (!data.ok()) return data.status();
  std::unique_ptr<Workspaces> workspaces(new Workspaces(*std::move(data)));
  absl::StatusOr<int> swept = workspaces->store_.SweepLeftovers();
  if (!swept.ok()) return swept.status();
  return workspaces;
}

absl::StatusOr<v1::DispatchPlan> Workspaces::PlanDispatch(const v1::WorkspaceDispatch& dispatch) {
  if (absl::Status id = CheckPathComponent("workspaceId", dispatch.workspace_id()); !id.ok()) {
    return id;
  }
  absl::StatusOr<policy::ConversationDirs> dirs =
      store_.DirsFor(dispatch.workspace_id(), dispatch.conversation_id(), dispatch.agent_id());
  if (!dirs.ok()) return dirs.status();
  std::string run_workdir;
  if (dispatch.kind() == v1::WorkspaceDispatch::KIND_HARNESS_BASH) {
    if (absl::Status valid = CheckNormalizedAbsolute("workdir", dispatch.workdir()); !valid.ok()) {
      return valid;
    }
    // Checked on what it resolves to: a symlink an agent planted in repos/ points anywhere.
    char resolved[PATH_MAX];
    if (::realpath(dispatch.workdir().c_str(), resolved) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("workdir: '", dispatch.workdir(), "': ", std::strerror(errno)));
    }
    run_workdir = resolved;
  } else {
    run_workdir = dispatch.workdir();
  }
  absl::StatusOr<policy::DispatchBinds> binds =
      policy::PlanDispatchBinds(*dirs, dispatch.kind(), run_workdir);
  if (!binds.ok()) return binds.status();
  absl::StatusOr<std::vector<std::string>> protected_paths =
      registry_.ProtectedPaths(dispatch.workspace_id());
  if (!protected_paths.ok()) return protected_paths.status();
  v1::DispatchPlan plan;
  for (v1::SandboxBindMount& bind : binds->bind_mounts) *plan.add_bind_mounts() = std::move(bind);
  for (v1::ConfinementRoot& root : binds->confinement_roots) {
    *plan.add_confinement_roots() = std::move(root);
  }
  plan.set_workdir(binds->workdir);
  for (std::string& path : *protected_paths) plan.add_protected_paths(std::move(path));
  return plan;
}

absl::Status Workspaces::ConfirmPinned(const std::string& host_path, uint64_t dev,
                                       uint64_t ino) const {
  if (host_path == data_->path() || !IsUnderOrEqual(host_path, data_->path())) {
    return absl::OkStatus();
  }
  absl::StatusOr<struct stat> st = data_->StatBelow(host_path);
  if (!st.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        st.status().message(), "; it changed while the session was launched: not starting"));
  }
  if (static_cast<uint64_t>(st->st_dev) != dev || static_cast<uint64_t>(st->st_ino) != ino) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", host_path,
                     "' named another directory when the session was launched (a symlink "
                     "swapped in and out?): not starting"));
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox::workspace
