// Every host object a native run binds, opened and checked before bwrap starts, and bound as
// what was opened. Each source is opened with the caller's file-system identity (a path the
// caller cannot reach stays unreachable), checked on the path it RESOLVES to (a symlink to
// the launcher's socket directory, to `/` or into /proc is refused however it is spelled),
// and cloned as a detached mount (open_tree) — idmapped to the sandbox uid for root callers,
// so host ownership stays as it was while the command is never host root. The run's child
// attaches the clones in its own private mount namespace under `stage_dir` (SandboxProcess)
// and bwrap binds them from there: a path swapped for a symlink between the check and
// bwrap's mount cannot redirect it.
//
//   absl::StatusOr<BindStage> stage = BindStage::Build(plan, shim_path, options);
//   bwrap_config.sources = stage->sources();
//   process_spec.stage_dir = options.stage_dir; process_spec.staged = stage->staged();
#ifndef CCSANDBOX_LAUNCHER_BIND_STAGE_H_
#define CCSANDBOX_LAUNCHER_BIND_STAGE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "launcher/sandbox_process.h"
#include "policy/plan/bind_checks.h"
#include "policy/plan/bwrap_argv.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::launcher {

struct StageOptions {
  // The caller's identity for opening sources; nullopt: the launcher's own (a root caller).
  std::optional<Identity> open_as;
  // >= 0: every clone is idmapped through this user namespace (MakeIdmapUserns).
  int idmap_userns_fd = -1;
  // Where the child attaches the clones (a tmpfs of its private mount namespace).
  std::string stage_dir;
  // No mount may be, contain or lie inside one of these (resolved paths).
  policy::ForbiddenDirs forbidden;
  // The same for the egress sockets, which live in the broker's runtime directory: never the
  // launcher's socket directory, /proc, /dev or /sys.
  policy::ForbiddenDirs socket_forbidden;
  // false (a launcher without CAP_SYS_ADMIN, running as its only caller): open and check
  // only; bwrap binds the host paths.
  bool clone = true;
};

class BindStage {
 public:
  static absl::StatusOr<BindStage> Build(const v1::LaunchPlan& plan, const std::string& shim_path,
                                         const StageOptions& options);

  // What bwrap binds from (paths under stage_dir). Its stage_beneath stages more clones into
  // this object: call staged() after rendering.
  policy::BindSources sources();

  // Opens `host_path` beneath the opened root of the deepest plan mount that contains it, as
  // the caller, without following any symlink or leaving the mount (openat2
  // RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH), clones it like the mounts and returns where the
  // child attaches the clone. FAILED_PRECONDITION when the path is reached through a symlink
  // now or is gone: the tree changed since it was checked, and the run does not start.
  absl::StatusOr<std::string> StageBeneath(const std::string& host_path);
  // What the child attaches; the fds stay owned by this object until the process started.
  std::vector<StagedMount> staged() const;

 private:
  struct Entry {
    UniqueFd tree;
    std::string target;
    bool directory;
  };
  struct Root {
    std::string host_path;
    UniqueFd opened;  // O_PATH, as the caller
    std::string target;
  };
  absl::StatusOr<std::string> Add(const std::string& field, const std::string& path,
                                  const std::string& name, bool as_caller, bool socket,
                                  const policy::ForbiddenDirs& forbidden, Root* root = nullptr,
                                  const v1::PlanMount* expected = nullptr);
  // Clones `opened` (idmapped when configured) and records it at stage_dir/name.
  absl::StatusOr<std::string> Clone(const std::string& field, const std::string& path, int opened,
                                    const std::string& name, bool directory);

  StageOptions options_;
  std::vector<Entry> entries_;
  std::vector<Root> roots_;                     // one per plan mount
  std::map<std::string, std::string> beneath_;  // host path -> staged target
  policy::BindSources sources_;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_BIND_STAGE_H_
