// What the create supervisor needs of a trapped thread (a "tracee"), behind a small interface
// so the emulator can run against a fake: its identity, a string in its memory, its cwd and
// open fds, and its file-system context (its root, its credentials and umask) borrowed by the
// supervising thread. The real one is ProcTraceeAccess (proc_tracee_access.h: /proc,
// process_vm_readv, setns/chroot and per-thread credentials).
//
//   absl::StatusOr<TraceeIdentity> id = access.Identity(tid);
//   absl::StatusOr<std::string> path = access.ReadString(tid, args[1]);
//   absl::StatusOr<UniqueFd> dir = access.OpenFd(tid, AT_FDCWD);
//   access.EnterRoot(tid); access.BecomeTracee(*id); ... openat(...) ...; access.BecomeSelf();
//
// NOT_FOUND always means the tracee is gone (the call is then dropped unanswered). Any other
// error of ReadString or OpenFd means a bad argument, which the kernel answers for itself; of
// Identity, EnterRoot, BecomeTracee or BecomeSelf, a failure of the supervisor (it stops, and
// every trapped call fails). Everything read can go stale the moment it is read: check
// SeccompListener::IdValid afterwards.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_TRACEE_ACCESS_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_TRACEE_ACCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "launcher/create_guard/tracee.h"

namespace ccsandbox::launcher {

class TraceeAccess {
 public:
  virtual ~TraceeAccess() = default;

  // The thread's fs ids, groups, umask and pid-namespace ids, read afresh.
  virtual absl::StatusOr<TraceeIdentity> Identity(pid_t tid) = 0;
  // The NUL-terminated string at `address` in its memory (a path: PATH_MAX with the NUL).
  virtual absl::StatusOr<std::string> ReadString(pid_t tid, uint64_t address) = 0;
  // Its cwd (fd == AT_FDCWD) or its fd `fd`, as a new O_PATH fd of ours.
  virtual absl::StatusOr<UniqueFd> OpenFd(pid_t tid, int fd) = 0;
  // Makes the calling thread resolve paths in its mount namespace and root (once per sandbox).
  virtual absl::Status EnterRoot(pid_t tid) = 0;
  // True when the directory `dir` lies on the file system of a free dir of that root.
  virtual bool IsFree(int dir) = 0;
  // The calling thread takes its fs ids, groups and umask, with no effective capability.
  virtual absl::Status BecomeTracee(const TraceeIdentity& identity) = 0;
  // The calling thread is itself again (any error is fatal: stop supervising).
  virtual absl::Status BecomeSelf() = 0;
  // An O_PATH fd of /proc as the supervising thread sees it (its own thread-self/fd links).
  virtual int self_proc() const = 0;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_TRACEE_ACCESS_H_
