#include "launcher/bind_stage.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"

namespace ccsandbox::launcher {
namespace {

// Opens `path` with another file-system identity on this thread only: the raw calls change
// the calling thread's credentials (glibc's wrappers would change every thread's).
// `beneath_fd` >= 0: openat2 beneath it, following no symlink; otherwise open(2).
UniqueFd OpenNow(const std::string& path, int beneath_fd) {
  if (beneath_fd < 0) return UniqueFd(open(path.c_str(), O_PATH | O_CLOEXEC));
  open_how how{};
  // No O_NOFOLLOW: with O_PATH it would hand back a trailing symlink itself; without it,
  // RESOLVE_NO_SYMLINKS refuses a symlink in every component, the last included (ELOOP).
  how.flags = O_PATH | O_CLOEXEC;
  // RESOLVE_NO_XDEV: a mount inside a bound tree is not in the sandbox (the tree is cloned
  // without its submounts); opening beneath it would bind the host's mount in after all.
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  return UniqueFd(
      static_cast<int>(syscall(SYS_openat2, beneath_fd, path.c_str(), &how, sizeof(how))));
}

absl::StatusOr<UniqueFd> OpenPathAs(const std::string& path, const std::optional<Identity>& as,
                                    int beneath_fd = -1) {
  if (!as.has_value()) return OpenNow(path, beneath_fd);
  std::vector<gid_t> saved(NGROUPS_MAX);
  const long n = syscall(SYS_getgroups, saved.size(), saved.data());
  if (n < 0) return absl::InternalError(absl::StrCat("getgroups: ", strerror(errno)));
  saved.resize(n);
  const uid_t old_uid = static_cast<uid_t>(syscall(SYS_setfsuid, -1));
  const gid_t old_gid = static_cast<gid_t>(syscall(SYS_setfsgid, -1));
  absl::Cleanup restore = [&] {
    syscall(SYS_setfsuid, old_uid);
    syscall(SYS_setfsgid, old_gid);
    syscall(SYS_setgroups, saved.size(), saved.data());
  };
  if (syscall(SYS_setgroups, as->groups.size(), as->groups.data()) != 0) {
    return absl::InternalError(absl::StrCat("setgroups: ", strerror(errno)));
  }
  syscall(SYS_setfsgid, as->gid);
  syscall(SYS_setfsuid, as->uid);
  if (static_cast<uid_t>(syscall(SYS_setfsuid, -1)) != as->uid ||
      static_cast<gid_t>(syscall(SYS_setfsgid, -1)) != as->gid) {
    return absl::InternalError("cannot take the caller's file-system identity");
  }
  // Dropping fsuid 0 drops the file capabilities too: this open is checked as the caller.
  UniqueFd fd = OpenNow(path, beneath_fd);
  const int saved_errno = errno;
  std::move(restore).Invoke();
  errno = saved_errno;
  return fd;
}

std::string ResolvedPath(int fd) {
  char buf[PATH_MAX + 1];
  const ssize_t n = readlink(absl::StrCat("/proc/self/fd/", fd).c_str(), buf, PATH_MAX);
  return n <= 0 ? std::string() : std::string(buf, n);
}

}  // namespace

absl::StatusOr<std::string> BindStage::Add(const std::string& field, const std::string& path,
                                           const std::string& name, bool as_caller, bool socket,
                                           const policy::ForbiddenDirs& forbidden, Root* root,
                                           const v1::PlanMount* expected) {
  absl::StatusOr<UniqueFd> opened = OpenPathAs(path, as_caller ? options_.open_as : std::nullopt);
  if (!opened.ok()) return opened.status();
  if (!opened->valid()) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR || err == ELOOP) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": '", path, "' does not exist on the host"));
    }
    return absl::FailedPreconditionError(
        absl::StrCat(field, ": cannot open '", path, "' as the caller: ", strerror(err)));
  }
  struct stat st;
  if (fstat(opened->get(), &st) != 0) {
    return absl::InternalError(absl::StrCat(field, ": fstat: ", strerror(errno)));
  }
  // The object the session was launched with, not whatever the path names now.
  if (expected != nullptr && expected->ino() != 0 &&
      (static_cast<uint64_t>(st.st_dev) != expected->dev() ||
       static_cast<uint64_t>(st.st_ino) != expected->ino())) {
    return absl::FailedPreconditionError(absl::StrCat(
        field, ": '", path,
        "' names another file than when the session was launched (swapped since?); its deny "
        "sets were computed for the old one: not starting. Launch a new session"));
  }
  if (socket ? !S_ISSOCK(st.st_mode) : !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", path, "' is not ",
                     socket ? "a Unix socket" : "a directory or a regular file"));
  }
  if (absl::Status s =
          policy::CheckResolvedBind(field, path, ResolvedPath(opened->get()), forbidden);
      !s.ok()) {
    return s;
  }
  if (root != nullptr) {
    root->host_path = path;
    root->opened.Reset(dup(opened->get()));
    fcntl(root->opened.get(), F_SETFD, FD_CLOEXEC);
  }
  if (!options_.clone) return path;
  absl::StatusOr<std::string> target = Clone(field, path, opened->get(), name, S_ISDIR(st.st_mode));
  if (!target.ok()) return target.status();
  if (root != nullptr) root->target = *target;
  return target;
}

absl::StatusOr<std::string> BindStage::Clone(const std::string& field, const std::string& path,
                                             int opened, const std::string& name, bool directory) {
  // The clone is of the object opened, whatever the path names by now. Not recursive: a
  // mount inside a bound tree (a bind of the launcher's socket dir, say) would come along
  // unchecked; the sandbox sees the directory beneath it instead.
  UniqueFd tree(static_cast<int>(
      syscall(SYS_open_tree, opened, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)));
  if (!tree.valid()) {
    return absl::FailedPreconditionError(
        absl::StrCat(field, ": cannot clone the mount of '", path, "': ", strerror(errno)));
  }
  if (options_.idmap_userns_fd >= 0) {
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_IDMAP;
    attr.userns_fd = static_cast<uint64_t>(options_.idmap_userns_fd);
    if (syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH, &attr, sizeof(attr)) != 0) {
      const int err = errno;
      struct statfs fs {};
      fstatfs(opened, &fs);
      return absl::FailedPreconditionError(absl::StrCat(
          field, ": '", path, "' cannot be idmapped (", strerror(err), ", file system magic 0x",
          absl::Hex(fs.f_type),
          "): a root caller's commands run as an unprivileged uid and see root-owned files "
          "through an idmapped mount; bind a tree on ext4, xfs, btrfs or tmpfs, or run the "
          "broker as an unprivileged user"));
    }
  }
  const std::string target = absl::StrCat(options_.stage_dir, "/", name);
  entries_.push_back({std::move(tree), target, directory});
  return target;
}

absl::StatusOr<std::string> BindStage::StageBeneath(const std::string& host_path) {
  const Root* best = nullptr;
  for (const Root& root : roots_) {
    if (IsUnderOrEqual(host_path, root.host_path) &&
        (best == nullptr || root.host_path.size() >= best->host_path.size())) {
      best = &root;
    }
  }
  if (best == nullptr) {
    return absl::InternalError(absl::StrCat("'", host_path, "' is under no mount of the plan"));
  }
  if (!options_.clone) return host_path;
  if (host_path == best->host_path) return best->target;
  if (auto it = beneath_.find(host_path); it != beneath_.end()) return it->second;
  const std::string rel = host_path.substr(best->host_path.size() + 1);
  absl::StatusOr<UniqueFd> opened = OpenPathAs(rel, options_.open_as, best->opened.get());
  if (!opened.ok()) return opened.status();
  if (!opened->valid() && errno == EXDEV) {
    return absl::OutOfRangeError(absl::StrCat(
        "'", host_path, "' lies in another mount on the host, which the sandbox does not see"));
  }
  if (!opened->valid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "denyWritePaths: '", host_path, "' ",
        errno == ENOENT ? "is gone" : "is reached through a symlink now", " (", strerror(errno),
        "): the bound tree changed since it was checked; not starting"));
  }
  struct stat st;
  if (fstat(opened->get(), &st) != 0) {
    return absl::InternalError(absl::StrCat("fstat: ", strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "denyWritePaths: '", host_path,
        "' is no longer a directory or a regular file: the bound tree changed since it was "
        "checked; not starting"));
  }
  absl::StatusOr<std::string> target =
      Clone("denyWritePaths", host_path, opened->get(), absl::StrCat("d", beneath_.size()),
            S_ISDIR(st.st_mode));
  if (!target.ok()) return target.status();
  beneath_[host_path] = *target;
  return target;
}

policy::BindSources BindStage::sources() {
  policy::BindSources sources = sources_;
  if (options_.clone) {
    sources.stage_beneath = [this](const std::string& path) { return StageBeneath(path); };
  }
  return sources;
}

absl::StatusOr<BindStage> BindStage::Build(const v1::LaunchPlan& plan, const std::string& shim_path,
                                           const StageOptions& options) {
  BindStage stage;
  stage.options_ = options;
  for (int i = 0; i < plan.mounts_size(); ++i) {
    Root& root = stage.roots_.emplace_back();
    absl::StatusOr<std::string> source = stage.Add(
        absl::StrCat("mounts[", i, "].hostPath"), plan.mounts(i).host_path(), absl::StrCat("m", i),
        /*as_caller=*/true, /*socket=*/false, options.forbidden, &root, &plan.mounts(i));
    if (!source.ok()) return source.status();
    if (options.clone) stage.sources_.mounts.push_back(*source);
  }
  if (plan.has_egress()) {
    for (const auto& [field, path, name, out] :
         {std::tuple{"egress.httpSocket", &plan.egress().http_socket(), "http.sock",
                     &stage.sources_.http_socket},
          std::tuple{"egress.socksSocket", &plan.egress().socks_socket(), "socks.sock",
                     &stage.sources_.socks_socket},
          std::tuple{"egress.pushSocket", &plan.egress().push_socket(), "push.sock",
                     &stage.sources_.push_socket}}) {
      if (path->empty() && out == &stage.sources_.push_socket) continue;  // no push gateway
      absl::StatusOr<std::string> source =
          stage.Add(field, *path, name, true, true, options.socket_forbidden);
      if (!source.ok()) return source.status();
      if (options.clone) *out = *source;
    }
  }
  if ((plan.has_egress() || plan.has_create_guard()) && !shim_path.empty()) {
    // The launcher's own binary, opened as the launcher: the caller need not reach it.
    absl::StatusOr<std::string> source =
        stage.Add("shim", shim_path, "shim", false, false, policy::ControlPlaneDirs());
    if (!source.ok()) return source.status();
    if (options.clone) stage.sources_.shim = *source;
  }
  return stage;
}

std::vector<StagedMount> BindStage::staged() const {
  std::vector<StagedMount> out;
  for (const Entry& e : entries_) out.push_back({e.tree.get(), e.target, e.directory});
  return out;
}

}  // namespace ccsandbox::launcher
