// One trapped creation call decoded: its route (decision.h), its syscall's name, and its
// arguments read from the tracee's memory ONCE (our copy is what we act on, so a thread
// rewriting the buffer afterwards changes nothing), with its cwd / dirfds opened for the
// relative paths. Whether it asks for a set-id mode is read from its registers alone, first,
// so a call that cannot be decoded further is still known to be one.
//
//   TrappedCall call;
//   absl::Status read = DecodeTrappedCall(notif, identity, tracee, &call);
//   // NOT_FOUND: the tracee is gone; another error: a bad argument, the kernel answers
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_TRAPPED_CALL_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_TRAPPED_CALL_H_

#include <linux/seccomp.h>
#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "base/unique_fd.h"
#include "launcher/create_guard/decision.h"
#include "launcher/create_guard/name_resolution.h"
#include "launcher/create_guard/tracee.h"
#include "launcher/create_guard/tracee_access.h"

namespace ccsandbox::launcher {

struct TrappedCall {
  CreateRoute route = CreateRoute::kOpen;
  const char* syscall = "";  // e.g. "openat", for the violation
  bool set_id = false;       // AsksForSetIdMode: the supervisor refuses it (EPERM) and reports it
  PathArg first;   // open, mkdir, mknod, chmod: the path; symlink: the link; link, rename: old
  PathArg second;  // link, rename: new
  int flags = 0;   // open: O_*; linkat, fchmodat2: AT_*; renameat2: RENAME_*
  mode_t mode = 0;
  unsigned dev = 0;            // mknod, as the kernel takes it
  std::string symlink_target;  // symlink: stored as given, never rewritten
  // linkat of one of the tracee's fds (AT_EMPTY_PATH, or /proc/self/fd/N with
  // AT_SYMLINK_FOLLOW).
  UniqueFd link_source;
  UniqueFd object;  // fchmod (or fchmodat2 with AT_EMPTY_PATH): the tracee's fd, opened
};

// True when the call would put S_ISUID or S_ISGID on disk: a chmod-family mode with either
// bit, or one given to open/openat with O_CREAT or O_TMPFILE, creat or mknod — exactly the
// seccomp baseline's set-id rules (seccomp_baseline.cc). From the registers alone.
bool AsksForSetIdMode(const seccomp_data& data);

// Decodes `notif` (an x86_64 call) into `call`, reading as root: run it before the
// supervising thread takes the tracee's credentials, and check IdValid before acting on it.
// NOT_FOUND when the tracee is gone; any other error is a bad argument (EFAULT, EBADF,
// ENAMETOOLONG, EINVAL, a syscall that is not ours), which the kernel answers exactly.
absl::Status DecodeTrappedCall(const seccomp_notif& notif, const TraceeIdentity& id,
                               TraceeAccess& tracee, TrappedCall* call);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_TRAPPED_CALL_H_
