#include "policy/plan/bwrap_argv.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/paths.h"
#include "policy/plan/egress_wiring.h"
#include "policy/plan/push_wiring.h"

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

// Where `path` lands once every symlink in it is followed, as bwrap follows them when it mounts
// onto a destination; the path as written when a link cannot be read or the chain is too long.
std::string LandsAt(const std::string& path, const HostView& host) {
  std::vector<std::string> pending = absl::StrSplit(path, '/', absl::SkipEmpty());
  std::reverse(pending.begin(), pending.end());
  std::string cur = "/";
  for (int links = 0; !pending.empty();) {
    const std::string comp = std::move(pending.back());
    pending.pop_back();
    if (comp == ".") continue;
    if (comp == "..") {
      cur = ParentPath(cur);
      continue;
    }
    const std::string candidate = cur == "/" ? "/" + comp : cur + "/" + comp;
    if (host.KindOf(candidate) != HostView::Kind::kSymlink) {
      cur = candidate;
      continue;
    }
    const std::string target = host.LinkTarget(candidate);
    if (target.empty() || ++links > 40) return path;
    if (target[0] == '/') cur = "/";
    std::vector<std::string> parts = absl::StrSplit(target, '/', absl::SkipEmpty());
    pending.insert(pending.end(), parts.rbegin(), parts.rend());
  }
  return cur;
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

// A deny operation, queued until every one is known: they are emitted parents first, since a
// mount made over a directory after a mount inside it would hide the inner one.
struct DenyOp {
  std::string path;
  std::vector<std::string> args;
};

// What the stages share: the inputs, the argv so far, the mounts visible inside and the queued
// deny operations.
struct Rendering {
  Rendering(const v1::LaunchPlan& plan, const BwrapConfig& config, const HostView& host)
      : plan(plan), config(config), host(host), source(plan, config.sources) {}

  void Op(std::initializer_list<std::string> args) {
    argv.insert(argv.end(), args.begin(), args.end());
  }
  // Paths under a hidden secret are not visible.
  bool IsHidden(const std::string& path) const {
    for (const std::string& h : hidden) {
      if (IsUnderOrEqual(path, h)) return true;
    }
    return false;
  }
  bool NeedsShim() const {
    return config.warm_init || plan.has_egress() || plan.has_create_guard();
  }

  const v1::LaunchPlan& plan;
  const BwrapConfig& config;
  const HostView& host;
  const SourceMap source;
  std::vector<std::string> argv;
  MountTable table;
  std::vector<DenyOp> deny_ops;
  std::vector<std::string> hidden;  // deny-read paths covered so far
};

// Namespaces: user, pid, ipc, uts, net, cgroup; no capabilities inside, even for root.
// No --new-session: the sandbox's pid 1 stays in the process group the launcher kills, and
// bwrap's setsid() would take it out before it has armed --die-with-parent (a kill landing in
// that gap left the sandbox running). The launcher already starts bwrap in a session of its own
// with no controlling terminal, and the seccomp baseline refuses TIOCSTI.
absl::Status NamespacesAndBase(Rendering& r) {
  r.argv.push_back(r.config.bwrap_path);
  r.Op({"--unshare-all", "--die-with-parent", "--cap-drop", "ALL"});
  // The terminal profile's open network (plan validation allows it on terminals only).
  if (r.plan.open_network()) r.Op({"--share-net"});
  if (r.config.inside_root) r.Op({"--uid", "0", "--gid", "0"});
  if (r.config.seccomp_fd.has_value()) r.Op({"--seccomp", absl::StrCat(*r.config.seccomp_fd)});
  return absl::OkStatus();
}

// The read-only system base; symlinks (merged-/usr /bin -> usr/bin) stay symlinks.
absl::Status SystemDirs(Rendering& r) {
  for (const std::string& dir : r.config.system_ro_dirs) {
    switch (r.host.KindOf(dir)) {
      case HostView::Kind::kSymlink:
        r.Op({"--symlink", r.host.LinkTarget(dir), dir});
        break;
      case HostView::Kind::kDirectory:
      case HostView::Kind::kFile:
        r.Op({"--ro-bind", dir, dir});
        r.table.Add(dir, false);
        break;
      case HostView::Kind::kMissing:
        break;
    }
  }
  return absl::OkStatus();
}

// Kernel tunables stay read-only for every caller (core_pattern runs a helper as host root);
// bwrap skips covering /proc/sys when its own access() check says it is read-only.
absl::Status ProcDevTmp(Rendering& r) {
  r.Op({"--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--ro-bind-try",
        "/proc/sysrq-trigger", "/proc/sysrq-trigger", "--dev", "/dev", "--tmpfs", "/tmp"});
  return absl::OkStatus();
}

// The plan's mounts, in its order.
absl::Status Binds(Rendering& r) {
  for (int i = 0; i < r.plan.mounts_size(); ++i) {
    const v1::PlanMount& mount = r.plan.mounts(i);
    r.Op({mount.read_only() ? "--ro-bind" : "--bind", r.source.Mount(i), mount.guest_path()});
    r.table.Add(mount.guest_path(), !mount.read_only());
  }
  return absl::OkStatus();
}

// Each directory between `path` and its enclosing writable `mount` becomes a mount point (a
// writable self-bind): a mount point cannot be renamed, so neither `path` nor an ancestor can be
// moved away from where the next sandbox's deny set will look for it.
absl::Status PinAncestors(Rendering& r, const std::string& path, const Mount& mount) {
  const std::string enclosing = mount.path;
  std::vector<std::string> ancestors;
  for (std::string a = ParentPath(path); a.size() > enclosing.size(); a = ParentPath(a)) {
    ancestors.push_back(a);
  }
  for (auto it = ancestors.rbegin(); it != ancestors.rend(); ++it) {
    if (r.table.IsMountPoint(*it) || r.host.KindOf(*it) != HostView::Kind::kDirectory) continue;
    absl::StatusOr<std::string> pinned = r.source.Of(*it);
    // A host mount inside the bound tree is not in the sandbox: nothing there to pin.
    if (absl::IsOutOfRange(pinned.status())) return absl::OkStatus();
    if (!pinned.ok()) return pinned.status();
    std::vector<std::string> args = {"--bind", *pinned, *it};
    // Threat: the pin binds the enclosing writable tree again, over any plan mount nested
    // below it — a read-only bind inside it would turn writable. Those are bound again on top.
    for (int i = 0; i < r.plan.mounts_size(); ++i) {
      const v1::PlanMount& nested = r.plan.mounts(i);
      // Compared where the mount lands: a bind spelled through a symlink is below it too.
      const std::string lands = LandsAt(nested.guest_path(), r.host);
      if (lands == *it || !IsUnderOrEqual(lands, *it)) continue;
      args.insert(args.end(), {nested.read_only() ? "--ro-bind" : "--bind", r.source.Mount(i),
                               nested.guest_path()});
    }
    r.deny_ops.push_back({*it, std::move(args)});
    r.table.Add(*it, true);
  }
  return absl::OkStatus();
}

// Secrets (queued): an empty READ-ONLY directory (a writable tmpfs would let the agent plant
// keys there) or /dev/null over files.
absl::Status DenyRead(Rendering& r) {
  for (const std::string& path : r.plan.deny_read_paths()) {
    // A concrete path may hold '*' or '?' (a directory named "co*py"): what exists is
    // rendered; an unexpanded glob does not exist and renders nothing.
    if (r.table.Containing(path) == nullptr || ThroughSymlink(path, r.host)) continue;
    switch (r.host.KindOf(path)) {
      case HostView::Kind::kDirectory:
        r.deny_ops.push_back({path, {"--tmpfs", path, "--remount-ro", path}});
        r.hidden.push_back(path);
        break;
      case HostView::Kind::kFile:
        r.deny_ops.push_back({path, {"--ro-bind", "/dev/null", path}});
        r.hidden.push_back(path);
        break;
      default:  // missing, or a symlink whose resolved spelling is its own entry
        continue;
    }
    // Threat: renaming a secret's parent in a writable tree (~/.config -> ~/.cfg) moves the
    // secret out of every later sandbox's deny set; pinned, the rename fails (EBUSY).
    if (const Mount* mount = r.table.Containing(path); mount != nullptr && mount->writable) {
      if (absl::Status pinned = PinAncestors(r, path, *mount); !pinned.ok()) return pinned;
    }
  }
  return absl::OkStatus();
}

// Deny-write (queued): read-only self-binds. A mount point cannot be renamed, unlinked or
// replaced (EBUSY), so each ancestor up to the enclosing mount is pinned as a mount point too —
// otherwise renaming a parent directory would move the protected path out of the way.
absl::Status DenyWriteAndPins(Rendering& r) {
  std::vector<std::string> deny_write(r.plan.deny_write_paths().begin(),
                                      r.plan.deny_write_paths().end());
  std::stable_sort(
      deny_write.begin(), deny_write.end(),
      [](const std::string& a, const std::string& b) { return PathDepth(a) < PathDepth(b); });
  std::set<std::string> done;
  for (const std::string& path : deny_write) {
    if (r.IsHidden(path) || done.count(path) > 0 || ThroughSymlink(path, r.host)) continue;
    const Mount* mount = r.table.Containing(path);
    if (mount == nullptr || !mount->writable) continue;  // invisible, or read-only already
    const HostView::Kind kind = r.host.KindOf(path);
    if (kind != HostView::Kind::kDirectory && kind != HostView::Kind::kFile) continue;
    if (absl::Status pinned = PinAncestors(r, path, *mount); !pinned.ok()) return pinned;
    absl::StatusOr<std::string> protected_source = r.source.Of(path);
    if (absl::IsOutOfRange(protected_source.status())) continue;  // not in the sandbox's view
    if (!protected_source.ok()) return protected_source.status();
    r.deny_ops.push_back({path, {"--ro-bind", *protected_source, path}});
    r.table.Add(path, false);
    done.insert(path);
  }
  return absl::OkStatus();
}

// The queued deny operations, parents first.
absl::Status DenyOpsParentsFirst(Rendering& r) {
  std::stable_sort(r.deny_ops.begin(), r.deny_ops.end(), [](const DenyOp& a, const DenyOp& b) {
    return PathDepth(a.path) < PathDepth(b.path);
  });
  for (const DenyOp& deny : r.deny_ops)
    r.argv.insert(r.argv.end(), deny.args.begin(), deny.args.end());
  return absl::OkStatus();
}

// Egress: the only way out of the empty network namespace is the session's proxies. The shim
// (bridges and the create guard) is bound in read-only.
absl::Status EgressAndShim(Rendering& r) {
  if (r.NeedsShim() && r.config.shim_path.empty()) {
    return absl::FailedPreconditionError(
        "the launcher has no sandbox_shim (needed for egress and the create guard)");
  }
  if (r.NeedsShim() && r.config.shim_args.empty()) {
    return absl::InternalError("the plan needs the shim but the launcher gave it no arguments");
  }
  const BindSources& sources = r.config.sources;
  if (r.plan.has_egress()) {
    r.Op({"--ro-bind", SourceMap::Or(sources.http_socket, r.plan.egress().http_socket()),
          kSandboxHttpSocket});
    r.Op({"--ro-bind", SourceMap::Or(sources.socks_socket, r.plan.egress().socks_socket()),
          kSandboxSocksSocket});
    if (!r.plan.egress().push_socket().empty()) {
      r.Op({"--ro-bind", SourceMap::Or(sources.push_socket, r.plan.egress().push_socket()),
            kSandboxPushSocket});
    }
  }
  if (r.NeedsShim()) {
    r.Op({"--ro-bind", SourceMap::Or(sources.shim, r.config.shim_path), kSandboxShimPath});
  }
  return absl::OkStatus();
}

// The command, under the shim when the plan needs it.
absl::Status ChdirAndCommand(Rendering& r) {
  r.Op({"--chdir", r.plan.workdir(), "--"});
  if (r.NeedsShim()) {
    r.argv.push_back(kSandboxShimPath);
    r.argv.insert(r.argv.end(), r.config.shim_args.begin(), r.config.shim_args.end());
  }
  r.argv.insert(r.argv.end(), r.plan.argv().begin(), r.plan.argv().end());
  return absl::OkStatus();
}

// The mount plan, in the order bubblewrap applies it.
using Stage = absl::Status (*)(Rendering&);
constexpr Stage kStages[] = {
    NamespacesAndBase,    // bwrap --unshare-all … --cap-drop ALL [--uid 0 --gid 0] [--seccomp FD]
    SystemDirs,           // --ro-bind /usr /usr, --symlink usr/bin /bin, …
    ProcDevTmp,           // --proc /proc, /proc/sys read-only, --dev /dev, --tmpfs /tmp
    Binds,                // --bind or --ro-bind SOURCE GUEST for each of the plan's mounts
    DenyRead,             // (queued) --tmpfs + --remount-ro, or /dev/null, over each secret
    DenyWriteAndPins,     // (queued) ancestors pinned with --bind, the path --ro-bind
    DenyOpsParentsFirst,  // the queued deny operations, shallowest path first
    EgressAndShim,        // --ro-bind the proxy sockets and the shim
    ChdirAndCommand,      // --chdir WORKDIR -- [SHIM SHIM_ARGS… --] ARGV…
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
  Rendering r(plan, config, host);
  for (Stage stage : kStages) {
    if (absl::Status status = stage(r); !status.ok()) return status;
  }
  return std::move(r.argv);
}

}  // namespace ccsandbox::policy
