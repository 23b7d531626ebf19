#include "launcher/run_supervisor.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "absl/strings/str_cat.h"
#include "base/kill_cause.h"
#include "policy/violations/parser.h"

namespace ccsandbox::launcher {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kCancelPoll{50};
constexpr size_t kChunk = 64 * 1024;
// A command still there this long after SIGKILL is ended by force (SupervisedProcess::ForceEnd).
constexpr std::chrono::seconds kForceEndAfter{5};

}  // namespace

namespace {

// One run's supervision: the state the poll loop carries from one wake-up to the next.
class Supervision {
 public:
  Supervision(SupervisedProcess& process, RunControl& control, const SuperviseOptions& options,
              EventSink& sink)
      : process_(process),
        control_(control),
        options_(options),
        sink_(sink),
        pending_stdin_(options.stdin_data),
        buffer_(kChunk, '\0') {
    if (options.timeout.count() > 0) deadline_ = Clock::now() + options.timeout;
  }

  RunOutcome Run() {
    if (pending_stdin_.empty()) process_.CloseStdin();
    last_tick_ = Clock::now();
    while (!exited_ || process_.stdout_fd() >= 0 || process_.stderr_fd() >= 0) {
      // Output is read only while the receiver keeps up: otherwise the command blocks on its
      // own pipes, and nothing piles up here.
      const bool ready = sink_.Ready();
      pollfd fds[6];
      const int n = PollSet(ready, fds);
      int ready_count =
          poll(fds, n, static_cast<int>(std::max<int64_t>(NextWait(ready).count(), 0)));
      if (ready_count < 0 && errno != EINTR) break;
      ActOnRequests();
      for (int i = 0; i < n && ready_count > 0; ++i) {
        if (fds[i].revents != 0) OnReady(fds[i].fd);
      }
      AdvanceDrain(ready);
    }
    return Finish();
  }

 private:
  // What the next poll waits on: output (only while the receiver keeps up, else its ready
  // fd), stdin while there is some to feed, the process, and Signal requests.
  int PollSet(bool ready, pollfd* fds) const {
    int n = 0;
    auto add = [&](int fd, short events) {
      if (fd >= 0) fds[n++] = pollfd{fd, events, 0};
    };
    if (ready) {
      add(process_.stdout_fd(), POLLIN);
      add(process_.stderr_fd(), POLLIN);
    } else {
      add(sink_.ready_fd(), POLLIN);
    }
    add(process_.stdin_fd(), POLLOUT);
    if (!exited_) add(process_.exit_fd(), POLLIN);
    add(control_.wake_fd(), POLLIN);
    return n;
  }

  milliseconds NextWait(bool ready) const {
    milliseconds wait = kCancelPoll;
    const Clock::time_point now = Clock::now();
    if (deadline_ && !exited_ && !timed_out_) {
      wait = std::min(wait, std::chrono::duration_cast<milliseconds>(*deadline_ - now));
    }
    if (killed_at_ && !exited_ && !forced_) {
      wait = std::min(wait,
                      std::chrono::duration_cast<milliseconds>(*killed_at_ + kForceEndAfter - now));
    }
    if (drain_deadline_ && ready) {
      wait = std::min(wait, std::chrono::duration_cast<milliseconds>(*drain_deadline_ - now));
    }
    return wait;
  }

  // Cancellation, the timeout and Signal requests act on every wake-up, whatever the output.
  void ActOnRequests() {
    if (!cancelled_ && sink_.Cancelled()) {
      cancelled_ = true;
      KillGroup(SIGKILL, {std::string(kKilledStopped), "cancelled by the client"});
    }
    if (!exited_ && !kill_.has_value() && options_.pids_limit_hit && options_.pids_limit_hit()) {
      KillGroup(SIGKILL, {std::string(kKilledPids), "the process limit was reached"});
    }
    if (!exited_ && !timed_out_ && deadline_ && Clock::now() >= *deadline_) {
      timed_out_ = true;  // once: a kill that has to travel (a warm Exec) is not resent in a loop
      KillGroup(SIGKILL, {std::string(kKilledTimeout),
                          absl::StrCat("timeout after ", options_.timeout.count(), " ms")});
    }
    if (!exited_ && !forced_ && killed_at_ && Clock::now() >= *killed_at_ + kForceEndAfter) {
      forced_ = true;
      process_.ForceEnd(
          absl::StrCat("a run did not end within ",
                       std::chrono::duration_cast<std::chrono::seconds>(kForceEndAfter).count(),
                       " s of SIGKILL"));
    }
    if (std::optional<RunControl::SignalRequest> req = control_.TakeRequest(); req && !exited_) {
      if (req->signal == SIGKILL || req->signal == SIGTERM || req->signal == SIGINT ||
          req->signal == SIGHUP) {
        KillGroup(req->signal, req->cause);
      } else {
        process_.SignalGroup(req->signal);
      }
    }
  }

  void OnReady(int fd) {
    if (fd == process_.stdout_fd() || fd == process_.stderr_fd()) {
      ReadOutput(fd, fd == process_.stdout_fd());
    } else if (fd == process_.stdin_fd()) {
      FeedStdin(fd);
    } else if (fd == process_.exit_fd() && !exited_) {
      OnExit();
    }
  }

  void ReadOutput(int fd, bool is_out) {
    const ssize_t got = read(fd, buffer_.data(), buffer_.size());
    if (got > 0) {
      v1::SandboxEvent event;
      if (is_out) {
        event.set_stdout(buffer_.data(), got);
      } else {
        event.set_stderr(buffer_.data(), got);
      }
      if (!cancelled_ && !sink_.Emit(event)) {
        cancelled_ = true;
        KillGroup(SIGKILL, {std::string(kKilledStopped), "the receiver went away"});
      }
      if (!is_out && options_.report_violations) {
        EmitViolations(scanner_.Feed(absl::string_view(buffer_.data(), got)));
      }
    } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
      if (is_out) {
        process_.CloseStdout();
      } else {
        CloseStderr();
      }
    }
  }

  void FeedStdin(int fd) {
    const ssize_t put =
        write(fd, pending_stdin_.data() + stdin_off_, pending_stdin_.size() - stdin_off_);
    if (put > 0) stdin_off_ += put;
    if ((put < 0 && errno != EAGAIN && errno != EINTR) || stdin_off_ == pending_stdin_.size()) {
      process_.CloseStdin();
    }
  }

  void OnExit() {
    // Leftovers of the command's process group do not outlive it; the leader is not reaped
    // yet, so the group id cannot have been recycled.
    process_.SignalGroup(SIGKILL);
    absl::StatusOr<int> reaped = process_.Reap();
    if (reaped.ok()) {
      wait_status_ = *reaped;
    } else {
      lost_ = std::string(reaped.status().message());
    }
    exited_ = true;
    process_.CloseStdin();
    drain_deadline_ = Clock::now() + options_.drain_limit;
  }

  // After the exit, output still held open elsewhere drains until the drain deadline, whose
  // clock stops while the receiver is slow; a receiver that takes nothing for stall_limit
  // loses the rest.
  void AdvanceDrain(bool ready) {
    const Clock::time_point now = Clock::now();
    if (drain_deadline_ && !ready && !kill_.has_value()) {
      *drain_deadline_ +=
          now - last_tick_;  // a slow receiver does not cut a finished command short
    }
    last_tick_ = now;
    if (exited_ && !ready) {
      if (!unready_since_) unready_since_ = now;
    } else {
      unready_since_.reset();
    }
    if ((drain_deadline_ && now >= *drain_deadline_) || (exited_ && cancelled_) ||
        (unready_since_ && now - *unready_since_ >= options_.stall_limit)) {
      process_.CloseStdout();
      if (process_.stderr_fd() >= 0) CloseStderr();
    }
  }

  RunOutcome Finish() {
    if (cancelled_) return RunOutcome::kCancelled;
    std::optional<v1::SandboxUsage> usage;
    if (options_.usage) usage = options_.usage();
    const int code = WIFEXITED(wait_status_)     ? WEXITSTATUS(wait_status_)
                     : WIFSIGNALED(wait_status_) ? 128 + WTERMSIG(wait_status_)
                                                 : 255;
    // The controller's own counters say why a run died of SIGKILL, not a guess from the status.
    if (!kill_.has_value() && usage.has_value() && code == 128 + SIGKILL) {
      if (usage->oom_kills() > 0) {
        kill_ = RunControl::SignalRequest{
            SIGKILL, {std::string(kKilledOom), "the memory limit was reached (the OOM killer)"}};
      }
    }
    if (!kill_.has_value() && !lost_.empty()) {
      kill_ = RunControl::SignalRequest{SIGKILL, {std::string(kKilledSandboxEnded), lost_}};
    }
    v1::SandboxEvent last;
    if (kill_.has_value()) {
      last.mutable_killed()->set_reason(kill_->cause.reason);
      last.mutable_killed()->set_detail(kill_->cause.detail);
      last.mutable_killed()->set_signal(kill_->signal);
      if (usage.has_value()) *last.mutable_killed()->mutable_usage() = *usage;
      sink_.Emit(last);
      return RunOutcome::kKilled;
    }
    last.mutable_exit()->set_exit_code(code);
    if (usage.has_value()) *last.mutable_exit()->mutable_usage() = *usage;
    sink_.Emit(last);
    return RunOutcome::kExited;
  }

  void KillGroup(int sig, KillCause cause) {
    if (!kill_.has_value()) kill_ = RunControl::SignalRequest{sig, std::move(cause)};
    if (sig == SIGKILL && !killed_at_) killed_at_ = Clock::now();
    process_.SignalGroup(sig);
  }

  void CloseStderr() {
    process_.CloseStderr();
    if (options_.report_violations) EmitViolations(scanner_.Finish());
  }

  void EmitViolations(std::vector<v1::SandboxViolation> found) {
    for (v1::SandboxViolation& violation : found) {
      v1::SandboxEvent event;
      *event.mutable_violation() = std::move(violation);
      if (!cancelled_) sink_.Emit(event);
    }
  }

  SupervisedProcess& process_;
  RunControl& control_;
  const SuperviseOptions& options_;
  EventSink& sink_;
  const std::string pending_stdin_;
  size_t stdin_off_ = 0;
  std::optional<Clock::time_point> deadline_;
  std::optional<Clock::time_point> drain_deadline_;
  std::optional<Clock::time_point> unready_since_;  // after exit, while the sink takes nothing
  std::optional<RunControl::SignalRequest> kill_;   // set when we ended the run
  Clock::time_point last_tick_;
  bool cancelled_ = false;
  bool exited_ = false;
  bool timed_out_ = false;
  std::optional<Clock::time_point> killed_at_;  // the first SIGKILL we sent
  bool forced_ = false;                         // ForceEnd was called
  int wait_status_ = 0;
  std::string lost_;  // why the command's end is unknown (its sandbox died)
  std::string buffer_;
  policy::ViolationScanner scanner_;
};

}  // namespace

RunOutcome Supervise(SupervisedProcess& process, RunControl& control,
                     const SuperviseOptions& options, EventSink& sink) {
  return Supervision(process, control, options, sink).Run();
}

}  // namespace ccsandbox::launcher
