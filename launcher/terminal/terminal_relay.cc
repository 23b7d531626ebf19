#include "launcher/terminal/terminal_relay.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "launcher/terminal/pty.h"

namespace ccsandbox::launcher {
namespace {

constexpr size_t kChunk = 64 << 10;
// Output still buffered in the PTY when the shell ends goes out, up to this much.
constexpr size_t kMaxDrainBytes = 4 << 20;

}  // namespace

TerminalRelay::TerminalRelay(UniqueFd master, SupervisedProcess& process, pid_t session,
                             RunControl& control, absl::Duration hangup_grace)
    : master_(std::move(master)),
      process_(process),
      session_(session),
      control_(control),
      hangup_grace_(hangup_grace),
      hangup_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

TerminalRelay::~TerminalRelay() = default;

absl::Status TerminalRelay::Write(absl::string_view data) {
  while (!data.empty()) {
    if (ended_.load()) return absl::FailedPreconditionError("the terminal has ended");
    const ssize_t n = write(master_.get(), data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) {
      return absl::FailedPreconditionError(absl::StrCat("terminal input: ", strerror(errno)));
    }
    // The shell is not reading: wait for room, looking up now and then for its end.
    struct pollfd room = {master_.get(), POLLOUT, 0};
    poll(&room, 1, 100);
  }
  return absl::OkStatus();
}

absl::Status TerminalRelay::Resize(unsigned rows, unsigned cols) {
  if (ended_.load()) return absl::FailedPreconditionError("the terminal has ended");
  return SetWindowSize(master_.get(), rows, cols);
}

absl::Status TerminalRelay::Signal(int sig) {
  if (ended_.load()) return absl::FailedPreconditionError("the terminal has ended");
  return SignalForeground(master_.get(), sig);
}

void TerminalRelay::Hangup() {
  const uint64_t one = 1;
  (void)!write(hangup_.get(), &one, sizeof(one));
}

void TerminalRelay::Drain(const std::function<bool(absl::string_view)>& output) {
  std::string buffer(kChunk, '\0');
  size_t total = 0;
  // The shell's last words may still be on their way through the line discipline when it has
  // exited: read until the PTY says no slave is open (EIO), or it stays quiet a while (a
  // leftover still holds the slave).
  while (total < kMaxDrainBytes) {
    struct pollfd more = {master_.get(), POLLIN, 0};
    if (poll(&more, 1, 250) <= 0) return;
    const ssize_t n = read(master_.get(), buffer.data(), buffer.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return;  // EIO: every slave is closed and all was read
    total += static_cast<size_t>(n);
    if (!output(absl::string_view(buffer.data(), static_cast<size_t>(n)))) return;
  }
}

TerminalRelay::End TerminalRelay::Run(const std::function<bool(absl::string_view)>& output) {
  return Run(output, SideInput());
}

TerminalRelay::End TerminalRelay::Run(const std::function<bool(absl::string_view)>& output,
                                      const SideInput& side) {
  End end;
  std::string buffer(kChunk, '\0');
  bool master_open = true;
  std::optional<absl::Time> kill_at;
  while (true) {
    struct pollfd fds[5] = {{process_.exit_fd(), POLLIN, 0},
                            {control_.wake_fd(), POLLIN, 0},
                            {hangup_.get(), POLLIN, 0},
                            {master_open ? master_.get() : -1, POLLIN, 0},
                            {side.fd, POLLIN, 0}};
    int timeout_ms = -1;
    if (kill_at.has_value()) {
      timeout_ms = static_cast<int>(
          std::max<int64_t>(0, absl::ToInt64Milliseconds(*kill_at - absl::Now())) + 1);
    }
    const int ready = poll(fds, 5, timeout_ms);
    if (ready < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;  // the shell has ended
    if (fds[4].revents != 0 && side.ready) side.ready();
    if (kill_at.has_value() && absl::Now() >= *kill_at) {
      process_.SignalGroup(SIGKILL);
      KillSession(session_);
      kill_at.reset();
    }
    if (fds[1].revents != 0) {
      if (std::optional<RunControl::SignalRequest> request = control_.TakeRequest()) {
        process_.SignalGroup(request->signal);
        if (request->signal == SIGKILL) KillSession(session_);
        if (!end.cause.has_value()) end.cause = request->cause;
      }
    }
    if (fds[2].revents != 0 && !kill_at.has_value()) {
      uint64_t count;
      (void)!read(hangup_.get(), &count, sizeof(count));
      // As a closed terminal window does: the shell gets SIGHUP (and passes it to its jobs).
      process_.SignalGroup(SIGHUP);
      process_.SignalGroup(SIGCONT);
      if (!end.cause.has_value()) {
        end.cause = KillCause{std::string(kKilledStopped), "the terminal's client went away"};
      }
      kill_at = absl::Now() + hangup_grace_;
    }
    if (master_open && fds[3].revents != 0) {
      const ssize_t n = read(master_.get(), buffer.data(), buffer.size());
      if (n > 0) {
        if (!output(absl::string_view(buffer.data(), static_cast<size_t>(n)))) Hangup();
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        master_open = false;  // EIO: every slave is closed; the end is near
      }
    }
  }
  if (master_open) Drain(output);
  ended_.store(true);
  // Nothing of the terminal outlives it: background jobs of the session go with the shell.
  process_.SignalGroup(SIGKILL);
  KillSession(session_);
  end.wait_status = process_.Reap();
  if (side.ready) side.ready();
  return end;
}

}  // namespace ccsandbox::launcher
