#include "launcher/macos/log_stream_monitor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "launcher/macos/process_parent.h"
#include "policy/violations/seatbelt_log.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::launcher::macos {
namespace {

std::string DescribeEnd(const absl::StatusOr<int>& status) {
  if (!status.ok()) return std::string(status.status().message());
  if (WIFEXITED(*status)) return absl::StrCat("exit status ", WEXITSTATUS(*status));
  if (WIFSIGNALED(*status)) return absl::StrCat("signal ", WTERMSIG(*status));
  return absl::StrCat("wait status ", *status);
}

int PollTimeoutMs(absl::Duration window) {
  // Often enough that a storm is delivered soon after its window ends.
  return static_cast<int>(std::clamp<int64_t>(absl::ToInt64Milliseconds(window / 4), 10, 250));
}

}  // namespace

absl::StatusOr<std::unique_ptr<LogStreamMonitor>> LogStreamMonitor::Start(
    LogStreamOptions options) {
  if (options.command.empty() || options.command[0].empty() || options.command[0][0] != '/') {
    return absl::InvalidArgumentError("log stream: the command must start with an absolute path");
  }
  if (!options.parent_of) options.parent_of = ParentOf;
  std::unique_ptr<LogStreamMonitor> monitor(new LogStreamMonitor(std::move(options)));
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError("log stream: pipe failed");
  monitor->wake_read_ = UniqueFd(fds[0]);
  monitor->wake_write_ = UniqueFd(fds[1]);
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  absl::StatusOr<std::unique_ptr<SpawnedProcess>> stream = monitor->Spawn();
  if (!stream.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("log stream: cannot start ", monitor->options_.command[0], ": ",
                     stream.status().message(), "; Seatbelt denials would go unreported"));
  }
  monitor->first_stream_ = *std::move(stream);
  monitor->reader_ = std::thread([m = monitor.get()] { m->Reader(); });
  return monitor;
}

LogStreamMonitor::LogStreamMonitor(LogStreamOptions options)
    : options_(std::move(options)),
      monitor_(
          options_.parent_of, [] { return absl::Now(); }, options_.window) {}

LogStreamMonitor::~LogStreamMonitor() {
  const char stop = 1;
  (void)!write(wake_write_.get(), &stop, 1);
  if (reader_.joinable()) reader_.join();
}

absl::StatusOr<std::unique_ptr<SpawnedProcess>> LogStreamMonitor::Spawn() const {
  absl::StatusOr<std::unique_ptr<SpawnedProcess>> stream =
      SpawnedProcess::Spawn({.executable = options_.command[0],
                             .argv = options_.command,
                             .envp = {"PATH=/usr/bin:/bin:/usr/sbin:/sbin"}});
  if (stream.ok()) (*stream)->CloseStdin();
  return stream;
}

void LogStreamMonitor::AddRun(const std::string& run_id, int64_t root_pid, RunSink sink) {
  absl::MutexLock lock(&mu_);
  monitor_.AddRun(run_id, root_pid);
  sinks_[run_id] = std::move(sink);
}

void LogStreamMonitor::RemoveRun(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  Deliver(monitor_.RemoveRun(run_id));
  sinks_.erase(run_id);
}

uint64_t LogStreamMonitor::lines() const {
  absl::MutexLock lock(&mu_);
  return lines_;
}

uint64_t LogStreamMonitor::stream_ends() const {
  absl::MutexLock lock(&mu_);
  return stream_ends_;
}

uint64_t LogStreamMonitor::noise() const {
  absl::MutexLock lock(&mu_);
  return monitor_.noise();
}

uint64_t LogStreamMonitor::unattributed() const {
  absl::MutexLock lock(&mu_);
  return monitor_.unattributed();
}

void LogStreamMonitor::Deliver(const std::vector<policy::RunViolation>& events) {
  for (const policy::RunViolation& e : events) {
    auto sink = sinks_.find(e.run_id);
    if (sink == sinks_.end()) continue;  // AddRun without a sink cannot happen; be safe
    v1::SandboxEvent event;
    *event.mutable_violation() = e.violation;
    event.mutable_violation()->set_count(e.count);
    sink->second(event);
  }
}

void LogStreamMonitor::HandleLine(const std::string& line) {
  absl::MutexLock lock(&mu_);
  ++lines_;
  Deliver(monitor_.Feed(line));
}

bool LogStreamMonitor::ReadStream(SpawnedProcess& stream, std::string& partial, bool& skipping) {
  char buf[65536];
  const ssize_t n = read(stream.stdout_fd(), buf, sizeof(buf));
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  size_t begin = 0;
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    if (buf[i] != '\n') continue;
    partial.append(buf + begin, i - begin);
    if (!skipping) HandleLine(partial);
    skipping = false;
    partial.clear();
    begin = i + 1;
  }
  partial.append(buf + begin, static_cast<size_t>(n) - begin);
  // A line longer than the parser reads is ignored whole (policy/violations/seatbelt_log.h):
  // drop what has come of it and the rest up to its newline, so memory stays bounded.
  if (partial.size() > policy::kMaxSeatbeltLogLineBytes) {
    partial.clear();
    skipping = true;
  }
  return true;
}

void LogStreamMonitor::StreamEnded(SpawnedProcess& stream) {
  stream.SignalGroup(SIGKILL);  // its stdout closed: whatever is left of it is of no use
  const std::string why =
      absl::StrCat(options_.command[0], " ended (", DescribeEnd(stream.Reap()),
                   "); restarting it: Sandbox denials logged until then are not reported");
  spdlog::error("seatbelt violation monitor: {}", why);
  {
    absl::MutexLock lock(&mu_);
    ++stream_ends_;
  }
  if (options_.on_stream_end) options_.on_stream_end(why);
}

bool LogStreamMonitor::WaitForStop(absl::Duration timeout) {
  pollfd fd{wake_read_.get(), POLLIN, 0};
  const int ms = static_cast<int>(std::max<int64_t>(absl::ToInt64Milliseconds(timeout), 0));
  return poll(&fd, 1, ms) > 0;
}

void LogStreamMonitor::Reader() {
  std::unique_ptr<SpawnedProcess> stream = std::move(first_stream_);
  for (;;) {
    if (stream == nullptr) {
      absl::StatusOr<std::unique_ptr<SpawnedProcess>> started = Spawn();
      if (!started.ok()) {
        const std::string why =
            absl::StrCat("cannot restart ", options_.command[0], ": ", started.status().message());
        spdlog::error("seatbelt violation monitor: {}", why);
        if (options_.on_stream_end) options_.on_stream_end(why);
        if (WaitForStop(options_.restart_delay)) return;
        continue;
      }
      stream = *std::move(started);
    }
    std::string partial;
    bool skipping = false;
    bool open = true;
    while (open) {
      pollfd fds[3] = {{stream->stdout_fd(), POLLIN, 0},
                       {stream->stderr_fd(), POLLIN, 0},
                       {wake_read_.get(), POLLIN, 0}};
      const int ready = poll(fds, 3, PollTimeoutMs(options_.window));  // a closed stderr: -1
      if (ready < 0 && errno != EINTR) break;
      if (fds[2].revents != 0) return;  // ~LogStreamMonitor: the stream is killed and reaped
      if (fds[0].revents != 0) open = ReadStream(*stream, partial, skipping);
      if (stream->stderr_fd() >= 0 && fds[1].revents != 0) {
        char buf[4096];  // the stream's complaints: logged, never left to fill the pipe
        const ssize_t n = read(stream->stderr_fd(), buf, sizeof(buf));
        if (n <= 0) {
          stream->CloseStderr();
        } else {
          spdlog::warn("seatbelt violation monitor: {} says: {}", options_.command[0],
                       std::string(buf, static_cast<size_t>(n)));
        }
      }
      absl::MutexLock lock(&mu_);
      Deliver(monitor_.Flush());
    }
    StreamEnded(*stream);
    stream.reset();
    if (WaitForStop(options_.restart_delay)) return;
  }
}

}  // namespace ccsandbox::launcher::macos
