#include "launcher/create_guard/tracee_fs_context.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/securebits.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace ccsandbox::launcher {
namespace {

absl::Status Fatal(absl::string_view what) {
  return absl::InternalError(absl::StrCat("create supervisor: ", what, ": ", strerror(errno)));
}

int CapGet(__user_cap_data_struct data[2]) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  return static_cast<int>(syscall(SYS_capget, &header, data));
}

int CapSet(const __user_cap_data_struct data[2]) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  return static_cast<int>(syscall(SYS_capset, &header, data));
}

}  // namespace

absl::StatusOr<std::unique_ptr<TraceeFsContext>> TraceeFsContext::ForThisThread(
    std::vector<std::string> free_dirs) {
  auto context = std::unique_ptr<TraceeFsContext>(new TraceeFsContext());
  context->free_dirs_ = std::move(free_dirs);
  context->host_proc_.Reset(open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!context->host_proc_.valid()) return Fatal("open /proc");
  if (CapGet(context->caps_) != 0) return Fatal("capget");
  if (geteuid() != 0) {
    return absl::FailedPreconditionError(
        "create supervisor: the launcher must run as root to act for the "
        "sandbox");
  }
  // The kernel must clear effective capabilities when euid leaves 0
  // (BecomeTracee relies on it).
  const int securebits = prctl(PR_GET_SECUREBITS);
  if (securebits < 0 || (securebits & (1 << SECURE_NO_SETUID_FIXUP)) != 0) {
    return absl::FailedPreconditionError(
        "create supervisor: SECBIT_NO_SETUID_FIXUP is set; capabilities would "
        "survive the "
        "switch to the sandbox's uid");
  }
  context->egid_ = getegid();
  const int count = getgroups(0, nullptr);
  if (count < 0) return Fatal("getgroups");
  context->groups_.resize(count);
  if (getgroups(count, context->groups_.data()) != count) return Fatal("getgroups");
  // setns(CLONE_NEWNS) needs a thread whose cwd and root are its own.
  if (unshare(CLONE_FS) != 0) return Fatal("unshare(CLONE_FS)");
  context->umask_ = umask(022);
  umask(context->umask_);
  return context;
}

TraceeFsContext::~TraceeFsContext() {
  if (as_tracee_) BecomeSelf().IgnoreError();
}

absl::Status TraceeFsContext::Enter(pid_t tid) {
  // The create filter denies every way to another root or mount namespace.
  if (entered_) return absl::OkStatus();
  UniqueFd ns(openat(host_proc_.get(), absl::StrCat(tid, "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC));
  UniqueFd root(openat(host_proc_.get(), absl::StrCat(tid, "/root").c_str(),
                       O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!ns.valid() || !root.valid()) {
    if (errno == ENOENT || errno == ESRCH) return absl::NotFoundError("the tracee is gone");
    return Fatal(absl::StrCat("open /proc/", tid, "/ns/mnt and root"));
  }
  if (setns(ns.get(), CLONE_NEWNS) != 0) return Fatal("setns into the sandbox's mount namespace");
  if (fchdir(root.get()) != 0 || chroot(".") != 0 || chdir("/") != 0) {
    return Fatal("chroot to the sandbox's root");
  }
  free_devs_.clear();
  for (const std::string& dir : free_dirs_) {
    struct stat st;
    if (stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) free_devs_.push_back(st.st_dev);
  }
  entered_ = true;
  return absl::OkStatus();
}

bool TraceeFsContext::IsFree(int dir) const {
  struct stat st;
  if (fstat(dir, &st) != 0) return false;
  for (dev_t dev : free_devs_) {
    if (st.st_dev == dev) return true;
  }
  return false;
}

absl::Status TraceeFsContext::BecomeTracee(const TraceeIdentity& identity) {
  as_tracee_ = true;
  // Groups and gid only matter while acting as the tracee (as root,
  // capabilities decide), so they are left in place afterwards and only changed
  // when the next tracee differs.
  if (identity.groups != groups_) {
    if (syscall(SYS_setgroups, identity.groups.size(), identity.groups.data()) != 0) {
      return Fatal("setgroups");
    }
    groups_ = identity.groups;
  }
  if (identity.fsgid != egid_) {
    if (syscall(SYS_setresgid, -1, identity.fsgid, -1) != 0) return Fatal("setresgid");
    egid_ = identity.fsgid;
  }
  if (identity.umask != umask_) {
    umask(identity.umask);
    umask_ = identity.umask;
  }
  // No effective capability (an fs-id change alone keeps CAP_MKNOD, and a
  // tracee running as uid 0 keeps everything): the kernel then grants what it
  // would grant the tracee, which bwrap started with none. Leaving euid 0
  // clears the effective set (checked at start-up: no SECBIT_NO_SETUID_FIXUP);
  // for uid 0 we clear it ourselves. Permitted stays.
  if (syscall(SYS_setresuid, -1, identity.fsuid, -1) != 0) return Fatal("setresuid");
  if (identity.fsuid == 0) {
    __user_cap_data_struct none[2] = {caps_[0], caps_[1]};
    none[0].effective = none[1].effective = 0;
    if (CapSet(none) != 0) return Fatal("capset (drop)");
    dropped_by_capset_ = true;
  }
  return absl::OkStatus();
}

absl::Status TraceeFsContext::BecomeSelf() {
  // Back to euid 0: the kernel restores the effective set from the permitted
  // one.
  if (syscall(SYS_setresuid, -1, 0, -1) != 0) return Fatal("setresuid (restore)");
  if (dropped_by_capset_) {
    if (CapSet(caps_) != 0) return Fatal("capset (restore)");
    dropped_by_capset_ = false;
  }
  as_tracee_ = false;
  return absl::OkStatus();
}

}  // namespace ccsandbox::launcher
