#include "policy/plan/dispatch_binds.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"

namespace ccsandbox::policy {
namespace {

v1::SandboxBindMount Bind(const std::string& path, bool read_only) {
  v1::SandboxBindMount bind;
  bind.set_host_path(path);
  bind.set_guest_path(path);
  bind.set_read_only(read_only);
  return bind;
}

v1::ConfinementRoot Root(const std::string& path, bool writable) {
  v1::ConfinementRoot root;
  root.set_path(path);
  root.set_writable(writable);
  return root;
}

}  // namespace

absl::StatusOr<DispatchBinds> PlanDispatchBinds(const ConversationDirs& dirs,
                                                v1::WorkspaceDispatch::Kind kind,
                                                const std::string& run_workdir) {
  DispatchBinds out;
  if (kind == v1::WorkspaceDispatch::KIND_HARNESS_BASH) {
    if (absl::Status valid = CheckNormalizedAbsolute("workdir", run_workdir); !valid.ok()) {
      return valid;
    }
    // Anywhere else (a sibling's directory, the registered checkout) the run must not reach.
    const bool inside = IsUnderOrEqual(run_workdir, dirs.agent_workdir) ||
                        (dirs.repos_present && IsUnderOrEqual(run_workdir, dirs.repos_dir));
    if (!inside) {
      return absl::InvalidArgumentError(absl::StrCat(
          "workdir: '", run_workdir, "' is outside the agent's working directory (",
          dirs.agent_workdir, ") and the conversation's repos/ (", dirs.repos_dir, ")"));
    }
    out.bind_mounts.push_back(Bind(run_workdir, false));
    out.confinement_roots.push_back(Root(run_workdir, true));
    out.workdir = run_workdir;
  } else {
    if (!run_workdir.empty()) {
      return absl::InvalidArgumentError(
          "workdir: only for harness bash; overlay dispatch runs in the agent's "
          "working directory");
    }
    out.bind_mounts.push_back(Bind(dirs.agent_workdir, false));
    out.bind_mounts.push_back(Bind(dirs.agent_config_dir, true));
    out.confinement_roots.push_back(Root(dirs.agent_workdir, true));
    out.confinement_roots.push_back(Root(dirs.agent_config_dir, false));
    out.workdir = dirs.agent_workdir;
  }
  // The shared roots: the file tools see them for both kinds; only overlay mounts them.
  const bool overlay = kind != v1::WorkspaceDispatch::KIND_HARNESS_BASH;
  if (dirs.repos_present) {
    if (overlay) out.bind_mounts.push_back(Bind(dirs.repos_dir, false));
    out.confinement_roots.push_back(Root(dirs.repos_dir, true));
  }
  if (!dirs.attachments_dir.empty() && dirs.attachments_present) {
    if (overlay) out.bind_mounts.push_back(Bind(dirs.attachments_dir, true));
    out.confinement_roots.push_back(Root(dirs.attachments_dir, false));
  }
  return out;
}

}  // namespace ccsandbox::policy
