#include "policy/plan/bwrap_argv.h"

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/plan/egress_wiring.h"
#include "base/paths.h"

namespace ccsandbox::policy {
namespace {

struct Mount {
  std::string path;
  bool writable;
};

// The mounts visible inside, to decide where a deny path lives.
class MountTable {
 public:
  void Add(std::string path, bool writable) { mounts_.push_back({std::move(path), writable}); }
  // The deepest mount containing `path`, or nullptr when the path is not visible.
  const Mount* Containing(const std::string& path) const {
    const Mount* best = nullptr;
    for (const Mount& m : mounts_) {
      if (IsUnderOrEqual(path, m.path) && (best == nullptr || m.path.size() >= best->path.size())) {
        best = &m;
      }
    }
    return best;
  }
  bool IsMountPoint(const std::string& path) const {
    for (const Mount& m : mounts_) {
      if (m.path == path) return true;
    }
    return false;
  }

 private:
  std::vector<Mount> mounts_;
};

// True when a directory on the way to `path` is a symlink: bwrap would follow it, possibly
// out of the sandbox's view. Such a spelling is left to its resolved twin.
bool ThroughSymlink(const std::string& path, const HostView& host) {
  for (std::string a = ParentPath(path); a != "/"; a = ParentPath(a)) {
    if (host.KindOf(a) == HostView::Kind::kSymlink) return true;
  }
  return false;
}

// Where bwrap reads a host path under the plan's mounts from: the same path below the staged
// source of the deepest mount that contains it.
class SourceMap {
 public:
  SourceMap(const v1::LaunchPlan& plan, const BindSources& sources)
      : plan_(plan), sources_(sources) {}
  std::string Mount(int i) const {
    return i < static_cast<int>(sources_.mounts.size()) ? sources_.mounts[i]
                                                         : plan_.mounts(i).host_path();
  }
  absl::StatusOr<std::string> Of(const std::string& path) const {
    if (sources_.stage_beneath) return sources_.stage_beneath(path);
    int best = -1;
    for (int i = 0; i < plan_.mounts_size(); ++i) {
      const std::string& host = plan_.mounts(i).host_path();
      if (IsUnderOrEqual(path, host) &&
          (best < 0 || host.size() >= plan_.mounts(best).host_path().size())) {
        best = i;
      }
    }
    if (best < 0) return path;
    return Mount(best) + path.substr(plan_.mounts(best).host_path().size());
  }
  static std::string Or(const std::string& source, const std::string& fallback) {
    return source.empty() ? fallback : source;
  }

 private:
  const v1::LaunchPlan& plan_;
  const BindSources& sources_;
};

}  // namespace

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
  auto op = [&argv](std::initializer_list<std::string> args) {
    argv.insert(argv.end(), args.begin(), args.end());
  };
  // Namespaces: user, pid, ipc, uts, net, cgroup; no capabilities inside, even for root.
  op({"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"});
  if (config.inside_root) op({"--uid", "0", "--gid", "0"});
  if (config.seccomp_fd.has_value()) op({"--seccomp", absl::StrCat(*config.seccomp_fd)});

  MountTable table;
  for (const std::string& dir : config.system_ro_dirs) {
    switch (host.KindOf(dir)) {
      case HostView::Kind::kSymlink:
        op({"--symlink", host.LinkTarget(dir), dir});
        break;
      case HostView::Kind::kDirectory:
      case HostView::Kind::kFile:
        op({"--ro-bind", dir, dir});
        table.Add(dir, false);
        break;
      case HostView::Kind::kMissing:
        break;
    }
  }
  // Kernel tunables stay read-only for every caller (core_pattern runs a helper as host
  // root); bwrap skips covering /proc/sys when its own access() check says it is read-only.
  op({"--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--ro-bind-try",
      "/proc/sysrq-trigger", "/proc/sysrq-trigger", "--dev", "/dev", "--tmpfs", "/tmp"});

  const SourceMap source(plan, config.sources);
  for (int i = 0; i < plan.mounts_size(); ++i) {
    const v1::PlanMount& mount = plan.mounts(i);
    op({mount.read_only() ? "--ro-bind" : "--bind", source.Mount(i), mount.guest_path()});
    table.Add(mount.guest_path(), !mount.read_only());
  }

  // Deny operations are collected, then emitted parents first: a mount made over a
  // directory after a mount inside it would hide the inner one.
  struct DenyOp {
    std::string path;
    std::vector<std::string> args;
  };
  std::vector<DenyOp> deny_ops;

  // Secrets: an empty READ-ONLY directory (a writable tmpfs would let the agent plant keys
  // there) or /dev/null over files.
  std::vector<std::string> hidden;
  for (const std::string& path : plan.deny_read_paths()) {
    // A concrete path may hold '*' or '?' (a directory named "co*py"): what exists is
    // rendered; an unexpanded glob does not exist and renders nothing.
    if (table.Containing(path) == nullptr || ThroughSymlink(path, host)) continue;
    switch (host.KindOf(path)) {
      case HostView::Kind::kDirectory:
        deny_ops.push_back({path, {"--tmpfs", path, "--remount-ro", path}});
        hidden.push_back(path);
        break;
      case HostView::Kind::kFile:
        deny_ops.push_back({path, {"--ro-bind", "/dev/null", path}});
        hidden.push_back(path);
        break;
      default:  // missing, or a symlink whose resolved spelling is its own entry
        break;
    }
  }
  auto is_hidden = [&hidden](const std::string& path) {
    for (const std::string& h : hidden) {
      if (IsUnderOrEqual(path, h)) return true;
    }
    return false;
  };

  // Deny-write: read-only self-binds. A mount point cannot be renamed, unlinked or replaced
  // (EBUSY), so each ancestor up to the enclosing mount is pinned as a mount point too —
  // otherwise renaming a parent directory would move the protected path out of the way.
  std::vector<std::string> deny_write(plan.deny_write_paths().begin(),
                                      plan.deny_write_paths().end());
  std::stable_sort(deny_write.begin(), deny_write.end(),
                   [](const std::string& a, const std::string& b) {
                     return PathDepth(a) < PathDepth(b);
                   });
  std::set<std::string> done;
  for (const std::string& path : deny_write) {
    if (is_hidden(path) || done.count(path) > 0 || ThroughSymlink(path, host)) {
      continue;
    }
    const Mount* mount = table.Containing(path);
    if (mount == nullptr || !mount->writable) continue;  // invisible, or read-only already
    const HostView::Kind kind = host.KindOf(path);
    if (kind != HostView::Kind::kDirectory && kind != HostView::Kind::kFile) continue;
    const std::string enclosing = mount->path;
    std::vector<std::string> ancestors;
    for (std::string a = ParentPath(path); a.size() > enclosing.size(); a = ParentPath(a)) {
      ancestors.push_back(a);
    }
    for (auto it = ancestors.rbegin(); it != ancestors.rend(); ++it) {
      if (table.IsMountPoint(*it) || host.KindOf(*it) != HostView::Kind::kDirectory) continue;
      absl::StatusOr<std::string> pinned = source.Of(*it);
      if (!pinned.ok()) return pinned.status();
      deny_ops.push_back({*it, {"--bind", *pinned, *it}});
      table.Add(*it, true);
    }
    absl::StatusOr<std::string> protected_source = source.Of(path);
    if (!protected_source.ok()) return protected_source.status();
    deny_ops.push_back({path, {"--ro-bind", *protected_source, path}});
    table.Add(path, false);
    done.insert(path);
  }

  std::stable_sort(deny_ops.begin(), deny_ops.end(), [](const DenyOp& a, const DenyOp& b) {
    return PathDepth(a.path) < PathDepth(b.path);
  });
  for (const DenyOp& deny : deny_ops) argv.insert(argv.end(), deny.args.begin(), deny.args.end());

  // Egress: the only way out of the empty network namespace is the session's proxies.
  const bool guard = plan.has_create_guard();
  if ((plan.has_egress() || guard) && config.shim_path.empty()) {
    return absl::FailedPreconditionError(
        "the launcher has no sandbox_shim (needed for egress and the create guard)");
  }
  if ((plan.has_egress() || guard) && config.shim_args.empty()) {
    return absl::InternalError("the plan needs the shim but the launcher gave it no arguments");
  }
  if (plan.has_egress()) {
    op({"--ro-bind", SourceMap::Or(config.sources.http_socket, plan.egress().http_socket()),
        kSandboxHttpSocket});
    op({"--ro-bind", SourceMap::Or(config.sources.socks_socket, plan.egress().socks_socket()),
        kSandboxSocksSocket});
  }
  if (plan.has_egress() || guard) {
    op({"--ro-bind", SourceMap::Or(config.sources.shim, config.shim_path), kSandboxShimPath});
  }

  op({"--chdir", plan.workdir(), "--"});
  if (plan.has_egress() || guard) {
    argv.push_back(kSandboxShimPath);
    argv.insert(argv.end(), config.shim_args.begin(), config.shim_args.end());
  }
  argv.insert(argv.end(), plan.argv().begin(), plan.argv().end());
  return argv;
}

}  // namespace ccsandbox::policy
