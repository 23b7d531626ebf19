#include "broker/microvm/guest_layout.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/paths.h"

namespace ccsandbox::broker::microvm {
namespace {

absl::Status CheckNormal(const char* what, const std::string& path) {
  if (IsNormalAbsolutePath(path)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("backend: microvm: ", what, " is not an absolute normalised path: ", path));
}

// A mount in the guest: where it is, whether it is writable, and the host path it shows.
struct Mount {
  std::string guest;
  std::string host;
  bool writable;
};

class MountTable {
 public:
  void Add(std::string guest, std::string host, bool writable) {
    mounts_.push_back({std::move(guest), std::move(host), writable});
  }
  // The deepest mount holding `path`; a later mount at the same depth wins (it is on top).
  const Mount* Containing(const std::string& path) const {
    const Mount* best = nullptr;
    for (const Mount& m : mounts_) {
      if (IsUnderOrEqual(path, m.guest) &&
          (best == nullptr || m.guest.size() >= best->guest.size())) {
        best = &m;
      }
    }
    return best;
  }
  bool IsMountPoint(const std::string& path) const {
    return std::any_of(mounts_.begin(), mounts_.end(),
                       [&](const Mount& m) { return m.guest == path; });
  }

 private:
  std::vector<Mount> mounts_;
};

// The host path the guest sees at `path` below `mount`.
std::string HostOf(const Mount& mount, const std::string& path) {
  if (path == mount.guest) return mount.host;
  const std::string rest = mount.guest == "/" ? path : path.substr(mount.guest.size());
  return mount.host == "/" ? rest : mount.host + rest;
}

class Builder {
 public:
  Builder(const v1::LaunchPlan& plan, const HostView& host) : plan_(plan), host_(host) {}

  absl::Status System(const std::vector<std::string>& dirs) {
    for (const std::string& dir : dirs) {
      if (absl::Status ok = CheckNormal("a system directory", dir); !ok.ok()) return ok;
      switch (host_.KindOf(dir)) {
        case HostView::Kind::kSymlink:
          layout_.symlinks.push_back({dir, host_.LinkTarget(dir)});
          break;
        case HostView::Kind::kDirectory:
          AddShare(dir, dir, true);
          break;
        case HostView::Kind::kFile:
          return NotADirectory("the system directory", dir);
        case HostView::Kind::kMissing:
          break;
      }
    }
    layout_.system_shares = layout_.shares.size();
    return absl::OkStatus();
  }

  absl::Status Mounts() {
    std::vector<const v1::PlanMount*> mounts;
    for (const v1::PlanMount& mount : plan_.mounts()) {
      if (absl::Status ok = CheckNormal("a mount's host path", mount.host_path()); !ok.ok()) {
        return ok;
      }
      if (absl::Status ok = CheckNormal("a mount's guest path", mount.guest_path()); !ok.ok()) {
        return ok;
      }
      if (host_.KindOf(mount.host_path()) != HostView::Kind::kDirectory) {
        return NotADirectory("the mount", mount.host_path());
      }
      mounts.push_back(&mount);
    }
    // Parents first: a share mounted over another's mount point would hide it.
    std::stable_sort(mounts.begin(), mounts.end(), [](const auto* a, const auto* b) {
      return PathDepth(a->guest_path()) < PathDepth(b->guest_path());
    });
    for (const v1::PlanMount* mount : mounts) {
      AddShare(mount->host_path(), mount->guest_path(), mount->read_only());
    }
    if (layout_.shares.size() > static_cast<size_t>(kMaxGuestShares)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "backend: microvm: ", layout_.shares.size(),
          " directories to share (system directories and mounts) but a microVM has room for ",
          kMaxGuestShares, " (virtio-mmio transports on -M microvm)"));
    }
    return absl::OkStatus();
  }

  // Secrets: an empty read-only directory or file over each one the guest would see.
  absl::Status DenyRead() {
    for (const std::string& path : plan_.deny_read_paths()) {
      if (!IsNormalAbsolutePath(path)) continue;  // a glob pattern left unexpanded names nothing
      const Mount* mount = table_.Containing(path);
      if (mount == nullptr || ThroughSymlink(path, *mount)) continue;
      const Mount in = *mount;
      switch (host_.KindOf(HostOf(in, path))) {
        case HostView::Kind::kDirectory:
          layout_.guards.push_back({SetupStep::kMaskDir, path});
          break;
        case HostView::Kind::kFile:
          layout_.guards.push_back({SetupStep::kMaskFile, path});
          break;
        default:  // missing, or a symlink whose resolved spelling is its own entry
          continue;
      }
      hidden_.push_back(path);
      // Threat: renaming a secret's parent in a writable share moves the secret out of every
      // later sandbox's deny set; pinned as a mount point, the rename fails (EBUSY).
      if (in.writable) Pin(path, in);
    }
    return absl::OkStatus();
  }

  // Deny-write: read-only self-binds under writable shares, their ancestors pinned.
  absl::Status DenyWrite() {
    std::vector<std::string> paths(plan_.deny_write_paths().begin(),
                                   plan_.deny_write_paths().end());
    std::stable_sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) {
      return PathDepth(a) < PathDepth(b);
    });
    std::set<std::string> done;
    for (const std::string& path : paths) {
      if (!IsNormalAbsolutePath(path) || Hidden(path) || done.count(path) > 0) continue;
      const Mount* mount = table_.Containing(path);
      if (mount == nullptr || !mount->writable || ThroughSymlink(path, *mount)) continue;
      const Mount in = *mount;
      const HostView::Kind kind = host_.KindOf(HostOf(in, path));
      if (kind != HostView::Kind::kDirectory && kind != HostView::Kind::kFile) continue;
      Pin(path, in);
      layout_.guards.push_back({SetupStep::kReadOnly, path});
      table_.Add(path, HostOf(in, path), false);
      done.insert(path);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<GuestLayout> Finish() {
    if (!plan_.workdir().empty()) {
      if (absl::Status ok = CheckNormal("the workdir", plan_.workdir()); !ok.ok()) return ok;
    }
    layout_.workdir = plan_.workdir();
    std::stable_sort(layout_.guards.begin(), layout_.guards.end(),
                     [](const GuestGuard& a, const GuestGuard& b) {
                       return PathDepth(a.guest_path) < PathDepth(b.guest_path);
                     });
    return std::move(layout_);
  }

 private:
  void AddShare(const std::string& host, const std::string& guest, bool read_only) {
    layout_.shares.push_back({host, guest, read_only});
    table_.Add(guest, host, !read_only);
  }

  absl::Status NotADirectory(const char* what, const std::string& path) const {
    return absl::FailedPreconditionError(absl::StrCat(
        "backend: microvm: ", what, " ", path,
        " is not a directory: the microVM shares directories only (9p), not files or symlinks"));
  }

  // True when a directory between `mount` and `path` is a symlink on the host: the guest would
  // follow it, perhaps out of the share. Such a spelling is left to its resolved twin.
  bool ThroughSymlink(const std::string& path, const Mount& mount) const {
    for (std::string a = ParentPath(path); a.size() > mount.guest.size(); a = ParentPath(a)) {
      if (host_.KindOf(HostOf(mount, a)) == HostView::Kind::kSymlink) return true;
    }
    return false;
  }

  bool Hidden(const std::string& path) const {
    return std::any_of(hidden_.begin(), hidden_.end(),
                       [&](const std::string& h) { return IsUnderOrEqual(path, h); });
  }

  // Each directory between `mount` and `path` becomes a mount point: it cannot be renamed.
  void Pin(const std::string& path, const Mount& mount) {
    std::vector<std::string> ancestors;
    for (std::string a = ParentPath(path); a.size() > mount.guest.size(); a = ParentPath(a)) {
      ancestors.push_back(a);
    }
    for (auto it = ancestors.rbegin(); it != ancestors.rend(); ++it) {
      if (table_.IsMountPoint(*it) ||
          host_.KindOf(HostOf(mount, *it)) != HostView::Kind::kDirectory) {
        continue;
      }
      layout_.guards.push_back({SetupStep::kPin, *it});
      table_.Add(*it, HostOf(mount, *it), true);
    }
  }

  const v1::LaunchPlan& plan_;
  const HostView& host_;
  GuestLayout layout_;
  MountTable table_;
  std::vector<std::string> hidden_;
};

std::string Tag(size_t i) { return absl::StrCat("s", i); }

}  // namespace

absl::StatusOr<GuestLayout> GuestLayoutFromPlan(const v1::LaunchPlan& plan,
                                                const std::vector<std::string>& system_dirs,
                                                const HostView& host) {
  Builder builder(plan, host);
  if (absl::Status ok = builder.System(system_dirs); !ok.ok()) return ok;
  if (absl::Status ok = builder.Mounts(); !ok.ok()) return ok;
  if (absl::Status ok = builder.DenyRead(); !ok.ok()) return ok;
  if (absl::Status ok = builder.DenyWrite(); !ok.ok()) return ok;
  return builder.Finish();
}

std::vector<std::string> ShareQemuArgs(const GuestLayout& layout) {
  std::vector<std::string> args;
  for (size_t i = 0; i < layout.shares.size(); ++i) {
    const GuestShare& share = layout.shares[i];
    // qemu's option syntax: ",," is a literal comma; a single one would start a new option.
    const std::string path = absl::StrReplaceAll(share.host_path, {{",", ",,"}});
    args.insert(args.end(),
                {"-fsdev",
                 absl::StrCat("local,id=fs", i, ",path=", path, ",security_model=none",
                              share.read_only ? ",readonly=on" : ""),
                 "-device", absl::StrCat("virtio-9p-device,fsdev=fs", i, ",mount_tag=", Tag(i))});
  }
  return args;
}

GuestSetup SetupOf(const GuestLayout& layout) {
  GuestSetup setup{.workdir = layout.workdir};
  // The system shares are read-only and cached in the guest: a program's start stats and opens
  // dozens of files there (python3 -c 'import json' under TCG: 0.4 s cached, 1.7 s uncached).
  auto share = [&](size_t i) {
    SetupStep step = layout.shares[i].read_only ? SetupStep::kShareReadOnly : SetupStep::kShare;
    if (i < layout.system_shares && layout.shares[i].read_only) step = SetupStep::kShareCached;
    setup.steps.push_back({step, layout.shares[i].guest_path, Tag(i)});
  };
  for (size_t i = 0; i < layout.system_shares; ++i) share(i);
  for (const GuestSymlink& link : layout.symlinks) {
    setup.steps.push_back({SetupStep::kSymlink, link.guest_path, link.target});
  }
  setup.steps.push_back({SetupStep::kBase, "/", ""});
  for (size_t i = layout.system_shares; i < layout.shares.size(); ++i) share(i);
  for (const GuestGuard& guard : layout.guards) {
    setup.steps.push_back({guard.step, guard.guest_path, ""});
  }
  return setup;
}

}  // namespace ccsandbox::broker::microvm
