#include "launcher/run_supervisor.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "absl/strings/str_cat.h"
#include "policy/violations/parser.h"

namespace ccsandbox::launcher {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kCancelPoll{50};
constexpr size_t kChunk = 64 * 1024;

}  // namespace

RunOutcome Supervise(SandboxProcess& process, RunControl& control, const SuperviseOptions& options,
                     EventSink& sink) {
  std::string pending_stdin = options.stdin_data;
  size_t stdin_off = 0;
  if (pending_stdin.empty()) process.CloseStdin();

  const std::optional<Clock::time_point> deadline =
      options.timeout.count() > 0 ? std::optional(Clock::now() + options.timeout) : std::nullopt;
  std::optional<Clock::time_point> drain_deadline;
  std::optional<Clock::time_point> unready_since;  // after exit, while the sink takes nothing
  std::optional<RunControl::SignalRequest> kill;   // set when we ended the run
  bool cancelled = false;
  bool exited = false;
  int wait_status = 0;
  std::string buffer(kChunk, '\0');
  policy::ViolationScanner scanner;
  auto emit_violations = [&](std::vector<v1::SandboxViolation> found) {
    for (v1::SandboxViolation& violation : found) {
      v1::SandboxEvent event;
      *event.mutable_violation() = std::move(violation);
      if (!cancelled) sink.Emit(event);
    }
  };
  auto close_output = [&] {
    process.CloseStdout();
    if (process.stderr_fd() >= 0) {
      process.CloseStderr();
      if (options.report_violations) emit_violations(scanner.Finish());
    }
  };

  auto kill_group = [&](int sig, std::string reason) {
    if (!kill.has_value()) kill = RunControl::SignalRequest{sig, std::move(reason)};
    process.SignalGroup(sig);
  };

  Clock::time_point last_tick = Clock::now();
  while (!exited || process.stdout_fd() >= 0 || process.stderr_fd() >= 0) {
    // Output is read only while the receiver keeps up: otherwise the command blocks on its
    // own pipes, and nothing piles up here.
    const bool ready = sink.Ready();
    pollfd fds[6];
    int n = 0;
    auto add = [&](int fd, short events) {
      if (fd >= 0) fds[n++] = pollfd{fd, events, 0};
    };
    if (ready) {
      add(process.stdout_fd(), POLLIN);
      add(process.stderr_fd(), POLLIN);
    } else {
      add(sink.ready_fd(), POLLIN);
    }
    add(process.stdin_fd(), POLLOUT);
    if (!exited) add(process.pidfd(), POLLIN);
    add(control.wake_fd(), POLLIN);

    milliseconds wait = kCancelPoll;
    Clock::time_point now = Clock::now();
    if (deadline && !exited) {
      wait = std::min(wait, std::chrono::duration_cast<milliseconds>(*deadline - now));
    }
    if (drain_deadline && ready) {
      wait = std::min(wait, std::chrono::duration_cast<milliseconds>(*drain_deadline - now));
    }
    int ready_count = poll(fds, n, static_cast<int>(std::max<int64_t>(wait.count(), 0)));
    if (ready_count < 0 && errno != EINTR) break;

    if (!cancelled && sink.Cancelled()) {
      cancelled = true;
      kill_group(SIGKILL, "cancelled by the client");
    }
    if (!exited && deadline && Clock::now() >= *deadline) {
      kill_group(SIGKILL, absl::StrCat("timeout after ", options.timeout.count(), " ms"));
    }
    if (std::optional<RunControl::SignalRequest> req = control.TakeRequest(); req && !exited) {
      if (req->signal == SIGKILL || req->signal == SIGTERM || req->signal == SIGINT ||
          req->signal == SIGHUP) {
        kill_group(req->signal, req->reason);
      } else {
        process.SignalGroup(req->signal);
      }
    }

    for (int i = 0; i < n && ready_count > 0; ++i) {
      if (fds[i].revents == 0) continue;
      const int fd = fds[i].fd;
      if (fd == process.stdout_fd() || fd == process.stderr_fd()) {
        const bool is_out = fd == process.stdout_fd();
        ssize_t got = read(fd, buffer.data(), buffer.size());
        if (got > 0) {
          v1::SandboxEvent event;
          if (is_out) {
            event.set_stdout(buffer.data(), got);
          } else {
            event.set_stderr(buffer.data(), got);
          }
          if (!cancelled && !sink.Emit(event)) {
            cancelled = true;
            kill_group(SIGKILL, "the receiver went away");
          }
          if (!is_out && options.report_violations) {
            emit_violations(scanner.Feed(absl::string_view(buffer.data(), got)));
          }
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
          if (is_out) {
            process.CloseStdout();
          } else {
            process.CloseStderr();
            if (options.report_violations) emit_violations(scanner.Finish());
          }
        }
      } else if (fd == process.stdin_fd()) {
        ssize_t put = write(fd, pending_stdin.data() + stdin_off, pending_stdin.size() - stdin_off);
        if (put > 0) stdin_off += put;
        if ((put < 0 && errno != EAGAIN && errno != EINTR) || stdin_off == pending_stdin.size()) {
          process.CloseStdin();
        }
      } else if (fd == process.pidfd() && !exited) {
        // Leftovers of the command's process group do not outlive it; the leader is not
        // reaped yet, so the group id cannot have been recycled.
        process.SignalGroup(SIGKILL);
        wait_status = process.Reap().value_or(0);
        exited = true;
        process.CloseStdin();
        drain_deadline = Clock::now() + options.drain_limit;
      }
    }
    now = Clock::now();
    if (drain_deadline && !ready && !kill.has_value()) {
      *drain_deadline += now - last_tick;  // a slow receiver does not cut a finished command short
    }
    last_tick = now;
    if (exited && !ready) {
      if (!unready_since) unready_since = now;
    } else {
      unready_since.reset();
    }
    if ((drain_deadline && now >= *drain_deadline) || (exited && cancelled) ||
        (unready_since && now - *unready_since >= options.stall_limit)) {
      close_output();
    }
  }

  if (cancelled) return RunOutcome::kCancelled;
  v1::SandboxEvent last;
  if (kill.has_value()) {
    last.mutable_killed()->set_reason(kill->reason);
    last.mutable_killed()->set_signal(kill->signal);
    sink.Emit(last);
    return RunOutcome::kKilled;
  }
  int code = WIFEXITED(wait_status)     ? WEXITSTATUS(wait_status)
             : WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status)
                                        : 255;
  last.mutable_exit()->set_exit_code(code);
  sink.Emit(last);
  return RunOutcome::kExited;
}

}  // namespace ccsandbox::launcher
