// Reading one trapped thread (a "tracee") from outside, by its host tid: its
// credentials and umask, a NUL-terminated string in its memory, and its cwd /
// open directories / root as O_PATH fds. Needs CAP_SYS_PTRACE (the launcher
// runs as root). Everything read here can go stale the moment it is read: check
// SeccompNotify::IdValid afterwards, which proves the tid still named the
// trapped thread.
//
// Functions return 0 or the errno the kernel would have given the tracee for
// the same argument (EFAULT, ENAMETOOLONG, EBADF...); ESRCH when the tracee is
// gone.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_TRACEE_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_TRACEE_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher {

// As the kernel checks file access: fs ids and supplementary groups, host
// spelling.
struct TraceeIdentity {
  uid_t fsuid = 0;
  gid_t fsgid = 0;
  std::vector<gid_t> groups;
  mode_t umask = 022;
  pid_t ns_tgid = 0;  // the process's pid and the thread's tid in the tracee's own pid
  pid_t ns_tid = 0;   // namespace: what /proc/self and /proc/thread-self mean to it
};

// Reads identities from /proc/TID/status, keeping each thread's file open so a
// read is one pread (a thread's creds and umask can change between calls: read
// every time).
class TraceeIdentityReader {
 public:
  // `host_proc` is an O_PATH fd of the host's /proc; it must outlive the
  // reader.
  explicit TraceeIdentityReader(int host_proc) : host_proc_(host_proc) {}
  int Read(pid_t tid, TraceeIdentity* identity);

 private:
  int host_proc_;
  absl::flat_hash_map<pid_t, UniqueFd> open_;
};

// Parses the text of /proc/TID/status; false when a field we need is missing. A last line
// without its '\n' (the text was cut short) is not read.
bool ParseTraceeStatus(absl::string_view status, TraceeIdentity* identity);

// A path argument: at most PATH_MAX bytes including the NUL, else ENAMETOOLONG.
int ReadTraceeString(pid_t tid, uint64_t address, std::string* out);

// The tracee's cwd (fd == AT_FDCWD) or its fd `fd` (any file), as a new O_PATH
// fd (EBADF when it has no such fd). Follows the /proc magic link as root: only
// for the tracee's own fds.
int OpenTraceeFd(int host_proc, pid_t tid, int fd, UniqueFd* out);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_TRACEE_H_
