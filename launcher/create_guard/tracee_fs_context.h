// The supervising thread's borrowed file-system context: the thread unshares
// its cwd, root and umask from the launcher's process, enters a tracee's mount
// namespace and root, and for each operation it performs on the tracee's behalf
// takes the tracee's credentials (effective and file-system uid/gid,
// supplementary groups, umask) with no effective capability. Paths then resolve
// exactly as they would for the tracee, and the kernel grants exactly what it
// would grant the tracee: no creating in a directory the tracee cannot write,
// no device nodes (setfsuid alone keeps CAP_MKNOD), new files owned by the
// tracee.
//
//   // on the supervising thread, once:
//   absl::StatusOr<std::unique_ptr<TraceeFsContext>> fs =
//       TraceeFsContext::ForThisThread({"/tmp"});
//   // per call:
//   fs->Enter(tid);                    // NOT_FOUND: the tracee is gone
//   { absl::Status s = fs->BecomeTracee(identity);  ... openat(...) ...
//   fs->BecomeSelf(); }
//
// Credentials are per thread in the kernel; this uses raw syscalls (glibc's
// wrappers would change every thread of the launcher). Real and saved ids stay
// root's, so no sandboxed process may signal the thread. Between calls the
// thread is root again (euid 0, its capabilities) but keeps the last tracee's
// gid, groups and umask, which root's capabilities make irrelevant; that saves
// syscalls on every call. Side effect: the kernel marks the launcher process
// non-dumpable at the first switch (any euid/fsuid change does, with the
// default fs.suid_dumpable=0): no core dumps. Any error other than NOT_FOUND is
// fatal: the supervisor must stop (and every trapped call then fails) rather
// than act with the wrong identity or root.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_TRACEE_FS_CONTEXT_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_TRACEE_FS_CONTEXT_H_

#include <linux/capability.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "launcher/create_guard/tracee.h"

namespace ccsandbox::launcher {

class TraceeFsContext {
 public:
  // Binds to the calling thread. `free_dirs` are the guest dirs where the
  // tracee may create by itself (IsFree). Needs root (CAP_SYS_ADMIN,
  // CAP_SYS_CHROOT, CAP_SETUID, CAP_SETGID).
  static absl::StatusOr<std::unique_ptr<TraceeFsContext>> ForThisThread(
      std::vector<std::string> free_dirs);
  ~TraceeFsContext();

  int host_proc() const { return host_proc_.get(); }

  // Enters the mount namespace and root of `tid`, once: every later call is a
  // no-op. Sound because the create filter denies chroot, pivot_root, setns and
  // new mount or user namespaces to every process it covers, so they all share
  // the root the first one had.
  absl::Status Enter(pid_t tid);
  // True when `dir` (an fd) lies on the file system of a free dir of the
  // current root.
  bool IsFree(int dir) const;

  absl::Status BecomeTracee(const TraceeIdentity& identity);
  absl::Status BecomeSelf();

 private:
  TraceeFsContext() = default;

  UniqueFd host_proc_;
  std::vector<std::string> free_dirs_;
  std::vector<dev_t> free_devs_;
  bool entered_ = false;
  // The thread's capabilities, restored by BecomeSelf; its current gid, groups
  // and umask (left as the last tracee's between calls: as root they do not
  // matter).
  __user_cap_data_struct caps_[2] = {};
  gid_t egid_ = 0;
  std::vector<gid_t> groups_;
  mode_t umask_ = 022;
  bool dropped_by_capset_ = false;
  bool as_tracee_ = false;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_TRACEE_FS_CONTEXT_H_
