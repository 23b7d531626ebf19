#include "policy/bwrap_argv.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/paths.h"

namespace ccsandbox::policy {

std::vector<std::string> DefaultSystemRoDirs() {
  return {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"};
}

absl::StatusOr<std::vector<std::string>> RenderBwrapArgv(const v1::LaunchPlan& plan,
                                                         const BwrapConfig& config,
                                                         const HostView& host) {
  if (plan.backend() != v1::SANDBOX_BACKEND_NATIVE) {
    return absl::InvalidArgumentError("backend: bwrap renders native plans only");
  }
  std::vector<std::string> argv = {config.bwrap_path};
  // Namespaces: user, pid, ipc, uts, net, cgroup; no capabilities inside, even for root.
  for (const char* op : {"--unshare-all", "--die-with-parent", "--new-session"}) {
    argv.push_back(op);
  }
  argv.insert(argv.end(), {"--cap-drop", "ALL"});

  for (const std::string& dir : config.system_ro_dirs) {
    switch (host.KindOf(dir)) {
      case HostView::Kind::kSymlink:
        argv.insert(argv.end(), {"--symlink", host.LinkTarget(dir), dir});
        break;
      case HostView::Kind::kDirectory:
      case HostView::Kind::kFile:
        argv.insert(argv.end(), {"--ro-bind", dir, dir});
        break;
      case HostView::Kind::kMissing:
        break;
    }
  }
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"});

  for (const v1::PlanMount& mount : plan.mounts()) {
    argv.insert(argv.end(), {mount.read_only() ? "--ro-bind" : "--bind", mount.host_path(),
                             mount.guest_path()});
  }
  // Protected checkouts stay read-only even inside a writable bind; a protected path that
  // is not under any bind stays invisible rather than being mounted in.
  for (const std::string& path : plan.protected_paths()) {
    if (IsGlob(path)) continue;
    for (const v1::PlanMount& mount : plan.mounts()) {
      if (IsUnderOrEqual(path, mount.guest_path())) {
        argv.insert(argv.end(), {"--ro-bind-try", path, path});
        break;
      }
    }
  }
  argv.insert(argv.end(), {"--chdir", plan.workdir(), "--"});
  argv.insert(argv.end(), plan.argv().begin(), plan.argv().end());
  return argv;
}

}  // namespace ccsandbox::policy
