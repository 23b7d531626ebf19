// The seccomp layer of create-time enforcement, installed by the shim in the
// process that execs the command: every call that can give a NEW name to
// something on the file system stops and waits for the launcher's
// CreateSupervisor, which decides it and, when allowed, performs it itself. The
// shim sends the listener fd (the "notify fd") to the launcher.
//
//   absl::StatusOr<std::string> program = CreateFilterProgram();  // before fork is fine
//   ... PR_SET_NO_NEW_PRIVS, RestrictCreationTo(...) ...
//   absl::StatusOr<UniqueFd> notify = InstallCreateFilter(*program);  // in the command's process
//
// Trapped (user notification): open/openat with O_CREAT, creat, mkdir/mkdirat,
// mknod/mknodat, symlink/symlinkat, link/linkat, rename/renameat/renameat2; and
// a set-id mode (S_ISUID or S_ISGID) in chmod, fchmod, fchmodat, fchmodat2 or an
// O_TMPFILE open, which the supervisor refuses with EPERM and reports.
// openat2 fails with ENOSYS (its flags sit behind a pointer seccomp cannot
// read; glibc and every runtime we know fall back to openat). io_uring_* fail
// with EPERM (its ops bypass seccomp), userfaultfd with EPERM (it could stall
// the supervisor reading a path). O_TMPFILE (without a set-id mode) is NOT trapped: it names
// nothing, and the only way to name it later is linkat, which is trapped and which Landlock bounds.
// chroot, pivot_root, setns, and unshare/clone with CLONE_NEWNS or CLONE_NEWUSER fail with EPERM,
// clone3 with ENOSYS (glibc falls back to clone): the root and mount namespace the supervisor
// resolves paths in stay the command's. A call through another ABI (i386, x32) kills the process.
//
// Installed with SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: once the supervisor
// has read a call, only a fatal signal interrupts the wait, so a signal cannot
// make the call restart while the supervisor is performing it. When the notify
// fd is closed (the supervisor stopped or died), trapped calls fail with
// ENOSYS: nothing is created unchecked.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_FILTER_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_FILTER_H_

#include <string>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher {

// The filter as classic BPF (an array of struct sock_filter), compiled with
// libseccomp.
absl::StatusOr<std::string> CreateFilterProgram();

// Loads `program` on the calling thread with a new listener and returns the
// notify fd (close-on-exec). Requires PR_SET_NO_NEW_PRIVS (or CAP_SYS_ADMIN)
// and Linux 5.19+.
absl::StatusOr<UniqueFd> InstallCreateFilter(const std::string& program);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_FILTER_H_
