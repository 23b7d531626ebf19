#include "launcher/warm/warm_sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::launcher {
namespace {

constexpr int kCancelPollMs = 200;
// An init that takes no frame for this long is treated as gone: the sandbox ends.
constexpr int kSendTimeoutMs = 5000;
// Exec cgroups kept for reuse per sandbox (as many Execs as ran at once, up to this).
constexpr size_t kSpareCgroups = 16;
// Lines of what bwrap and the init say that reach the log, per sandbox (the rest is counted).
constexpr int kLoggedLines = 200;
constexpr size_t kStderrTail = 2048;

absl::StatusOr<std::pair<UniqueFd, UniqueFd>> Pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::ResourceExhaustedError(absl::StrCat("pipe: ", strerror(errno)));
  }
  return std::pair{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace

WarmSandbox::WarmSandbox(std::string id, std::unique_ptr<SandboxProcess> process, UniqueFd channel,
                         PooledCgroup cgroup)
    : id_(std::move(id)),
      process_(std::move(process)),
      cgroup_(std::move(cgroup)),
      channel_(std::move(channel)),
      stop_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

absl::StatusOr<std::unique_ptr<Cgroup>> WarmSandbox::TakeExecCgroup() {
  uint64_t n;
  {
    absl::MutexLock lock(&mu_);
    if (!spare_cgroups_.empty()) {
      std::unique_ptr<Cgroup> spare = std::move(spare_cgroups_.back());
      spare_cgroups_.pop_back();
      return spare;
    }
    n = next_cgroup_++;
  }
  // Only in the pids hierarchy: it holds every process of the Exec (to kill, to count its
  // forks); the memory, CPU and freezer limits are the session's. A v1 cgroup directory costs
  // milliseconds to make and to remove, so an Exec's is kept for the next one (spare_cgroups_).
  absl::StatusOr<std::unique_ptr<Cgroup>> made =
      cgroup_->CreateChild(absl::StrCat("e-", n), {"pids"});
  if (!made.ok()) return made;
  // A little below the session's: the Exec's own fork bomb is stopped (and named) at its own
  // limit, while the session's processes (bwrap, the init, reapers) keep room to work.
  if (const uint64_t session_pids = cgroup_->PidsMax(); session_pids > 16) {
    (void)(*made)->SetLimits({.pids_max = session_pids - 8});
  }
  return made;
}

void WarmSandbox::ReturnExecCgroup(std::unique_ptr<Cgroup> done) {
  // Kept only empty, and only while the sandbox lives; else it is killed and removed.
  if (!done->KillAll().ok()) return;
  absl::MutexLock lock(&mu_);
  if (dead_.empty() && spare_cgroups_.size() < kSpareCgroups) {
    spare_cgroups_.push_back(std::move(done));
  }
}

absl::Status WarmSandbox::Freeze(bool frozen) {
  if (cgroup_ == nullptr || !cgroup_->CanFreeze()) {
    return absl::UnimplementedError(
        "suspend: this launcher cannot freeze sandboxes (no cgroup freezer: resource limits "
        "are not enforced here)");
  }
  absl::MutexLock freezing(&freeze_mu_);
  {
    // A freeze after the end's kill would hold every process with the kill pending (a frozen
    // process does not die), and the end would wait on them for good.
    absl::MutexLock lock(&mu_);
    if (ending_) {
      return absl::FailedPreconditionError(
          absl::StrCat("the session's sandbox has ended: ", dead_.empty() ? "ending" : dead_));
    }
  }
  absl::Status done = cgroup_->Freeze(frozen);
  if (done.ok()) {
    absl::MutexLock lock(&mu_);
    frozen_ = frozen;
  }
  return done;
}

void WarmSandbox::ForceEnd(const std::string& why) {
  {
    absl::MutexLock lock(&mu_);
    // A suspended Exec cannot end: its kill lands when the session is resumed.
    if (frozen_) return;
  }
  Stop(why);
}

void WarmSandbox::Stop(const std::string& reason) {
  {
    absl::MutexLock lock(&mu_);
    if (stop_reason_.empty()) stop_reason_ = reason;
  }
  const uint64_t one = 1;
  (void)!write(stop_.get(), &one, sizeof(one));
}

WarmSandbox::~WarmSandbox() { Die("the sandbox was stopped"); }

std::optional<CgroupUsage> WarmSandbox::Usage() const {
  if (cgroup_ == nullptr) return std::nullopt;
  absl::StatusOr<CgroupUsage> read = cgroup_->Usage();
  if (!read.ok()) return std::nullopt;
  read->pids_peak = std::max(read->pids_peak, read->pids_current);
  return *read;
}

bool WarmSandbox::was_ready() const {
  absl::MutexLock lock(&mu_);
  return ready_;
}

std::string WarmSandbox::DrainOutput(int fd, bool is_stderr) {
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof(buf));
  if (n <= 0) return "closed";
  const std::string text(buf, static_cast<size_t>(n));
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (++logged_lines_ <= kLoggedLines) {
      spdlog::warn("sandbox {}: {}", id_, std::string(line));
    } else if (logged_lines_ == kLoggedLines + 1) {
      spdlog::warn("sandbox {}: said more than {} lines; the rest is not logged", id_,
                   kLoggedLines);
    }
  }
  if (is_stderr) {
    stderr_tail_.append(text);
    if (stderr_tail_.size() > kStderrTail) {
      stderr_tail_.erase(0, stderr_tail_.size() - kStderrTail);
    }
  }
  return "";
}

std::string WarmSandbox::Serve(const std::function<bool()>& cancelled, RunControl& control,
                               const Hooks& hooks, absl::Duration ready_limit) {
  const absl::Time ready_deadline = absl::Now() + ready_limit;
  std::string reason;
  bool channel_open = true;
  bool exited = false;
  while (reason.empty()) {
    pollfd fds[6] = {{channel_open ? channel_.get() : -1, POLLIN, 0},
                     {process_->exit_fd(), POLLIN, 0},
                     {process_->stdout_fd(), POLLIN, 0},
                     {process_->stderr_fd(), POLLIN, 0},
                     {control.wake_fd(), POLLIN, 0},
                     {stop_.get(), POLLIN, 0}};
    if (poll(fds, 6, kCancelPollMs) < 0 && errno != EINTR) {
      reason = absl::StrCat("poll: ", strerror(errno));
    } else if (fds[5].revents != 0) {
      absl::MutexLock lock(&mu_);
      reason = stop_reason_;
    } else if (std::optional<RunControl::SignalRequest> stop = control.TakeRequest()) {
      reason = stop->cause.detail.empty() ? stop->cause.reason : stop->cause.detail;
    } else if (cancelled()) {
      reason = "stopped by the broker";
    } else if (!was_ready() && absl::Now() > ready_deadline) {
      reason = absl::StrCat("its init was not ready within ", absl::FormatDuration(ready_limit));
    }
    if (!reason.empty()) break;
    for (int i : {2, 3}) {
      if (fds[i].fd >= 0 && fds[i].revents != 0 && !DrainOutput(fds[i].fd, i == 3).empty()) {
        i == 2 ? process_->CloseStdout() : process_->CloseStderr();
      }
    }
    if (fds[0].revents != 0) {
      absl::Status read = ReadFrames(hooks);
      if (absl::IsUnavailable(read)) {
        channel_open = false;  // the init exited: its exit status follows
      } else if (!read.ok()) {
        reason = absl::StrCat("its init sent what it may not (", read.message(), ")");
      }
    }
    if (reason.empty() && fds[1].revents != 0) {
      reason = Reaped();
      exited = true;
    }
  }
  // Everything of the session ends here (a frozen sandbox is thawed to die: a frozen process
  // would not), and so does its cgroup. A Freeze under way finishes first; none starts after.
  {
    absl::MutexLock freezing(&freeze_mu_);
    absl::MutexLock lock(&mu_);
    ending_ = true;
  }
  if (cgroup_ != nullptr) {
    if (absl::Status killed = cgroup_->KillAll(); !killed.ok()) {
      spdlog::error("sandbox {}: {}", id_, std::string(killed.message()));
    }
  }
  if (!exited) {
    process_->SignalGroup(SIGKILL);
    (void)process_->Reap();
  }
  std::vector<std::unique_ptr<Cgroup>> spares;
  {
    absl::MutexLock lock(&mu_);
    spares.swap(spare_cgroups_);
  }
  for (auto& spare : spares) spare->Forget();  // removed with the session's, below it
  // The session's cgroup itself is retired (removed in the background) with this object,
  // once the last Exec that reads its counters is done.
  Die(reason);
  return reason;
}

absl::Status WarmSandbox::ReadFrames(const Hooks& hooks) {
  absl::Status read = reader_.ReadAvailable(channel_.get());
  if (!read.ok()) return read;
  while (std::optional<absl::StatusOr<InitFrame>> frame = reader_.Next()) {
    if (!frame->ok()) return frame->status();
    if ((*frame)->message.kind != InitKind::kReady) {
      OnFrame((*frame)->message);
      if ((*frame)->message.kind == InitKind::kEnded && hooks.on_exec_ended) hooks.on_exec_ended();
      continue;
    }
    bool first = false;
    {
      absl::MutexLock lock(&mu_);
      first = !ready_;
      ready_ = true;
    }
    if (first && hooks.on_ready) hooks.on_ready(process_->pid());
  }
  return absl::OkStatus();
}

std::string WarmSandbox::Reaped() {
  process_->SignalGroup(SIGKILL);
  absl::StatusOr<int> status = process_->Reap();
  // What bwrap and the init said last is the best account of why.
  if (process_->stderr_fd() >= 0) {
    fcntl(process_->stderr_fd(), F_SETFL, O_NONBLOCK);
    while (DrainOutput(process_->stderr_fd(), true).empty()) {
    }
  }
  const int code = !status.ok()           ? -1
                   : WIFEXITED(*status)   ? WEXITSTATUS(*status)
                   : WIFSIGNALED(*status) ? 128 + WTERMSIG(*status)
                                          : -1;
  std::string reason = absl::StrCat("the sandbox exited (code ", code, ")");
  const std::string said(absl::StripAsciiWhitespace(stderr_tail_));
  if (!said.empty()) absl::StrAppend(&reason, ": ", said);
  return reason;
}

void WarmSandbox::OnFrame(const InitMessage& message) {
  std::shared_ptr<WarmExecState> state;
  {
    absl::MutexLock lock(&mu_);
    auto found = execs_.find(message.exec_id);
    if (found == execs_.end()) return;  // ended and forgotten, or never ours
    state = found->second;
    if (message.kind == InitKind::kEnded) execs_.erase(found);
  }
  if (message.kind == InitKind::kStarted) {
    state->Started(message.value);
  } else if (message.kind == InitKind::kEnded) {
    // The reaper's code: the command's exit code, or 128 + the signal that ended it.
    state->Ended((message.value & 0xff) << 8);
  }
}

void WarmSandbox::Die(const std::string& reason) {
  std::map<uint64_t, std::shared_ptr<WarmExecState>> execs;
  {
    absl::MutexLock lock(&mu_);
    if (dead_.empty()) dead_ = reason.empty() ? "ended" : reason;
    execs.swap(execs_);
  }
  for (auto& [id, state] : execs) {
    state->Ended(absl::UnavailableError(absl::StrCat("the session's sandbox ended: ", reason)));
  }
}

void WarmSandbox::Signal(uint64_t exec_id, int sig) {
  InitMessage message{.kind = InitKind::kSignal, .exec_id = exec_id, .value = sig};
  absl::Status sent;
  {
    absl::MutexLock lock(&send_mu_);
    sent = SendInitMessage(channel_.get(), message, {}, kSendTimeoutMs);
  }
  if (!sent.ok()) Stop(absl::StrCat("its init did not take a signal (", sent.message(), ")"));
}

absl::StatusOr<std::unique_ptr<WarmExec>> WarmSandbox::StartExec(
    const std::vector<std::string>& argv, const std::vector<std::string>& env,
    const std::string& workdir, UniqueFd guard_channel) {
  absl::StatusOr<std::pair<UniqueFd, UniqueFd>> in = Pipe(), out = Pipe(), err = Pipe();
  for (auto* pipe : {&in, &out, &err}) {
    if (!pipe->ok()) return pipe->status();
  }
  auto state = std::make_shared<WarmExecState>();
  uint64_t exec_id;
  {
    absl::MutexLock lock(&mu_);
    if (!dead_.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the session's sandbox has ended: ", dead_));
    }
    exec_id = next_exec_++;
    execs_[exec_id] = state;
  }
  // The Exec's own cgroup below the session's; its reaper joins it before the command starts.
  std::unique_ptr<Cgroup> exec_cgroup;
  std::vector<UniqueFd> procs;
  if (cgroup_ != nullptr) {
    absl::StatusOr<std::unique_ptr<Cgroup>> made = TakeExecCgroup();
    if (!made.ok()) {
      absl::MutexLock lock(&mu_);
      execs_.erase(exec_id);
      return made.status();
    }
    exec_cgroup = *std::move(made);
    for (const std::string& file : exec_cgroup->ProcsFiles()) {
      UniqueFd fd(open(file.c_str(), O_WRONLY | O_CLOEXEC));
      if (!fd.valid()) {
        absl::MutexLock lock(&mu_);
        execs_.erase(exec_id);
        return absl::InternalError(absl::StrCat("cgroups: ", file, ": ", strerror(errno)));
      }
      procs.push_back(std::move(fd));
    }
  }
  InitMessage message{.kind = InitKind::kExec, .exec_id = exec_id};
  message.argv = argv;
  message.env = env;
  message.workdir = workdir;
  std::vector<int> fds = {in->first.get(), out->second.get(), err->second.get()};
  if (guard_channel.valid()) fds.push_back(guard_channel.get());
  for (const UniqueFd& fd : procs) fds.push_back(fd.get());
  absl::Status sent;
  {
    absl::MutexLock lock(&send_mu_);
    sent = SendInitMessage(channel_.get(), message, fds, kSendTimeoutMs);
  }
  if (!sent.ok()) {
    Stop(absl::StrCat("its init did not take an Exec (", sent.message(), ")"));
    absl::MutexLock lock(&mu_);
    execs_.erase(exec_id);
    return absl::FailedPreconditionError(
        absl::StrCat("the session's sandbox is not reachable: ", sent.message()));
  }
  // Ours from here on, whether or not it starts: dropping it kills it.
  auto exec = std::make_unique<WarmExec>(
      state, std::move(in->second), std::move(out->first), std::move(err->first),
      [this, exec_id](int sig) { Signal(exec_id, sig); },
      [this](const std::string& why) { ForceEnd(why); });
  exec->SetCgroup(std::move(exec_cgroup), cgroup_.get(),
                  [this](std::unique_ptr<Cgroup> done) { ReturnExecCgroup(std::move(done)); });
  absl::StatusOr<pid_t> started = state->AwaitStart(absl::Seconds(10));
  if (!started.ok() && !state->result().has_value()) return started.status();
  return exec;
}

absl::Status WarmSandboxes::Add(const std::string& id, Entry entry) {
  absl::MutexLock lock(&mu_);
  if (!entries_.emplace(id, std::move(entry)).second) {
    return absl::AlreadyExistsError(absl::StrCat("runId: sandbox '", id, "' already runs"));
  }
  return absl::OkStatus();
}

void WarmSandboxes::Remove(const std::string& id) {
  absl::MutexLock lock(&mu_);
  entries_.erase(id);
}

absl::StatusOr<WarmSandboxes::Entry> WarmSandboxes::Find(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto found = entries_.find(id);
  if (found == entries_.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("sandboxId: no warm sandbox '", id,
                     "' runs in this launcher (it ended, or the launcher restarted)"));
  }
  return found->second;
}

}  // namespace ccsandbox::launcher
