// One hosted terminal, seen from the launcher: the PTY's output goes out as it comes, the
// client's keystrokes, resizes and signals come in from another thread, until the shell ends.
//
//   TerminalRelay relay(std::move(pty.master), *process, control);
//   std::thread input([&] { while (read message) relay.Write(bytes) / Resize / Signal; });
//   TerminalRelay::End end = relay.Run([&](absl::string_view out) { return send(out); });
//   relay.Hangup();   // from any thread: the client went away
//
// The end takes everything with it: the shell's process group and every process still in its
// session are killed once it has ended, and a hung-up terminal gets SIGHUP, then SIGKILL
// after a grace period.
#ifndef CCSANDBOX_LAUNCHER_TERMINAL_TERMINAL_RELAY_H_
#define CCSANDBOX_LAUNCHER_TERMINAL_TERMINAL_RELAY_H_

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/kill_cause.h"
#include "base/unique_fd.h"
#include "launcher/run_control.h"
#include "launcher/supervised_process.h"

namespace ccsandbox::launcher {

class TerminalRelay {
 public:
  struct End {
    absl::StatusOr<int> wait_status;  // the shell's (bwrap's, native), or why it is unknown
    std::optional<KillCause> cause;   // set when the host ended it (Kill, a hang-up)
  };

  // `session` is the shell's session id on the host (its spawned pid), swept at the end.
  TerminalRelay(UniqueFd master, SupervisedProcess& process, pid_t session, RunControl& control,
                absl::Duration hangup_grace = absl::Seconds(2));
  ~TerminalRelay();
  TerminalRelay(const TerminalRelay&) = delete;
  TerminalRelay& operator=(const TerminalRelay&) = delete;

  // Input thread: writes all of `data` to the PTY, waiting for room while the shell reads.
  // FAILED_PRECONDITION once the terminal has ended.
  absl::Status Write(absl::string_view data);
  absl::Status Resize(unsigned rows, unsigned cols);
  absl::Status Signal(int sig);
  // The client is gone (its stream ended or broke): SIGHUP now, SIGKILL after the grace.
  void Hangup();

  // Relays output to `output` (false: the client cannot take it, which hangs up) until the
  // shell has ended and its last output is out; then sweeps its session and reaps it.
  // `side`: another fd to watch (e.g. TerminalEventQueue::wake_fd) and what to do when it is
  // readable, on this thread; called once more after the end.
  struct SideInput {
    int fd = -1;
    std::function<void()> ready;
  };
  End Run(const std::function<bool(absl::string_view)>& output, const SideInput& side);
  End Run(const std::function<bool(absl::string_view)>& output);

 private:
  void Drain(const std::function<bool(absl::string_view)>& output);

  UniqueFd master_;
  SupervisedProcess& process_;
  const pid_t session_;
  RunControl& control_;
  const absl::Duration hangup_grace_;
  UniqueFd hangup_;  // eventfd: readable once Hangup was called
  std::atomic<bool> ended_{false};
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_TERMINAL_TERMINAL_RELAY_H_
