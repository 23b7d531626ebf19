// The Landlock layer of create-time enforcement: after RestrictCreationTo(dirs)
// the calling thread, and everything it later execs or forks, can create
// file-system entries (regular files, directories, symlinks, FIFOs, sockets,
// devices; and link or rename across directories) only beneath `dirs`.
// Everything else — reading, writing existing files, removing — is left to the
// other layers.
//
//   if (absl::Status s = RestrictCreationTo({"/tmp"}); !s.ok()) fail closed;
//
// It is the backstop of the seccomp supervisor: every creation the supervisor
// lets the kernel CONTINUE, and every call a racing thread rewrote after the
// supervisor read it, is still stopped here (EACCES) unless it lands beneath
// `dirs`. It is also the only layer for creations seccomp cannot see: bind() of
// an AF_UNIX socket path, io_uring (denied anyway). A Landlock-restricted
// process cannot ptrace or open /proc/PID/mem of a process outside its domain
// (bwrap's PID 1, the shim's bridge): they stay out of reach.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_LANDLOCK_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_LANDLOCK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ccsandbox::launcher {

// The kernel's Landlock ABI version (>= 1), or UNAVAILABLE saying why (not
// built in, or disabled at boot: not in the lsm= list).
absl::StatusOr<int> LandlockAbi();

// Sets PR_SET_NO_NEW_PRIVS and restricts the calling thread as above. From ABI
// 2 on, linking or renaming between directories beneath `dirs` works; on ABI 1
// it fails with EXDEV (programs like mv fall back to copying). Each dir must
// exist.
// Beneath `socket_dirs`, bind() of AF_UNIX sockets is allowed too (nothing else): a socket
// holds no content, so whatever its name, no host program reads code from it.
// From ABI 6 on, the domain also scopes signals and abstract Unix sockets (see ScopeSignals).
absl::Status RestrictCreationTo(const std::vector<std::string>& dirs,
                                const std::vector<std::string>& socket_dirs = {});

// Whether Landlock ABI `abi` can scope signals (ABI 6, Linux 6.12).
bool SignalScopeAvailable(int abi);

// Sets PR_SET_NO_NEW_PRIVS and enters a Landlock domain that restricts nothing on the file
// system but signals: the caller and what it later runs can signal (kill, tgkill, pidfd, SIGIO
// through F_SETOWN) only processes of its own domain or nested ones, and connect only to
// abstract Unix sockets made there. A command so scoped
// cannot kill the processes that track and end it (its Exec's reaper, the sandbox's init).
// UNAVAILABLE on a kernel whose Landlock cannot.
absl::Status ScopeSignals();

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_LANDLOCK_H_
