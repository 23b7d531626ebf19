#include "launcher/bind_stage.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/egress_wiring.h"

namespace ccsandbox::launcher {
namespace {

// Opens `path` with another file-system identity on this thread only: the raw calls change
// the calling thread's credentials (glibc's wrappers would change every thread's).
absl::StatusOr<UniqueFd> OpenPathAs(const std::string& path, const std::optional<Identity>& as) {
  if (!as.has_value()) return UniqueFd(open(path.c_str(), O_PATH | O_CLOEXEC));
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
  UniqueFd fd(open(path.c_str(), O_PATH | O_CLOEXEC));
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
                                           const std::string& name, bool as_caller,
                                           bool socket, const policy::ForbiddenDirs& forbidden) {
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
  if (socket ? !S_ISSOCK(st.st_mode) : !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": '", path, "' is not ", socket ? "a Unix socket" : "a directory or a regular file"));
  }
  if (absl::Status s = policy::CheckResolvedBind(field, path, ResolvedPath(opened->get()),
                                                 forbidden);
      !s.ok()) {
    return s;
  }
  if (!options_.clone) return path;
  // The clone is of the object opened above, whatever the path names by now.
  UniqueFd tree(static_cast<int>(syscall(SYS_open_tree, opened->get(), "",
                                         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
                                             AT_RECURSIVE)));
  if (!tree.valid()) {
    return absl::FailedPreconditionError(
        absl::StrCat(field, ": cannot clone the mount of '", path, "': ", strerror(errno)));
  }
  if (options_.idmap_userns_fd >= 0) {
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_IDMAP;
    attr.userns_fd = static_cast<uint64_t>(options_.idmap_userns_fd);
    if (syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
                sizeof(attr)) != 0) {
      const int err = errno;
      struct statfs fs {};
      fstatfs(opened->get(), &fs);
      return absl::FailedPreconditionError(absl::StrCat(
          field, ": '", path, "' cannot be idmapped (", strerror(err), ", file system magic 0x",
          absl::Hex(fs.f_type),
          "): a root caller's commands run as an unprivileged uid and see root-owned files "
          "through an idmapped mount; bind a tree on ext4, xfs, btrfs or tmpfs, or run the "
          "broker as an unprivileged user"));
    }
  }
  const std::string target = absl::StrCat(options_.stage_dir, "/", name);
  entries_.push_back({std::move(tree), target, S_ISDIR(st.st_mode)});
  return target;
}

absl::StatusOr<BindStage> BindStage::Build(const v1::LaunchPlan& plan,
                                           const std::string& shim_path,
                                           const StageOptions& options) {
  BindStage stage;
  stage.options_ = options;
  for (int i = 0; i < plan.mounts_size(); ++i) {
    absl::StatusOr<std::string> source =
        stage.Add(absl::StrCat("mounts[", i, "].hostPath"), plan.mounts(i).host_path(),
                  absl::StrCat("m", i), /*as_caller=*/true, /*socket=*/false,
                  options.forbidden);
    if (!source.ok()) return source.status();
    if (options.clone) stage.sources_.mounts.push_back(*source);
  }
  if (plan.has_egress()) {
    for (const auto& [field, path, name, out] :
         {std::tuple{"egress.httpSocket", &plan.egress().http_socket(), "http.sock",
                     &stage.sources_.http_socket},
          std::tuple{"egress.socksSocket", &plan.egress().socks_socket(), "socks.sock",
                     &stage.sources_.socks_socket}}) {
      absl::StatusOr<std::string> source = stage.Add(field, *path, name, true, true, options.socket_forbidden);
      if (!source.ok()) return source.status();
      if (options.clone) *out = *source;
    }
  }
  if ((plan.has_egress() || plan.has_create_guard()) && !shim_path.empty()) {
    // The launcher's own binary, opened as the launcher: the caller need not reach it.
    absl::StatusOr<std::string> source = stage.Add("shim", shim_path, "shim", false, false, policy::ControlPlaneDirs());
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
