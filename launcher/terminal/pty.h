// A pseudo-terminal for a hosted terminal: the launcher keeps the master, the shell gets the
// slave as its stdio and controlling terminal (ProcessSpec::tty_fd).
//
//   absl::StatusOr<Pty> pty = OpenPty(24, 80);
//   spec.tty_fd = pty->slave.get();  spawn;  pty->slave.Reset();
//   SetWindowSize(pty->master.get(), 40, 120);   // the foreground job gets SIGWINCH
#ifndef CCSANDBOX_LAUNCHER_TERMINAL_PTY_H_
#define CCSANDBOX_LAUNCHER_TERMINAL_PTY_H_

#include <sys/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher {

struct Pty {
  UniqueFd master;  // non-blocking, close-on-exec
  UniqueFd slave;   // close-on-exec; never our controlling terminal
};

// A new PTY pair of `rows` x `cols` (policy::ValidTerminalSize, else INVALID_ARGUMENT).
absl::StatusOr<Pty> OpenPty(unsigned rows, unsigned cols);

absl::Status SetWindowSize(int master, unsigned rows, unsigned cols);

// Signals the terminal's foreground process group, as the line discipline does for ^C.
// Only the signals a terminal user can send (TerminalInput.signal's list); others are
// INVALID_ARGUMENT.
absl::Status SignalForeground(int master, int sig);

// SIGKILL to every process still in session `sid` (the shell's, on the host): background jobs
// a hung-up shell left behind. Processes that left the session (setsid) are out of reach here;
// a native terminal's end takes its whole PID namespace with it.
void KillSession(pid_t sid);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_TERMINAL_PTY_H_
