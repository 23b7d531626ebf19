#include "launcher/warm/warm_exec.h"

#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace ccsandbox::launcher {

WarmExecState::WarmExecState() : ended_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

void WarmExecState::Started(pid_t pid) {
  absl::MutexLock lock(&mu_);
  if (!pid_.has_value()) pid_ = pid;
}

void WarmExecState::Ended(absl::StatusOr<int> result) {
  absl::MutexLock lock(&mu_);
  if (result_.has_value()) return;
  result_ = std::move(result);
  const uint64_t one = 1;
  (void)!write(ended_.get(), &one, sizeof(one));
}

absl::StatusOr<pid_t> WarmExecState::AwaitStart(absl::Duration limit) {
  absl::MutexLock lock(&mu_);
  auto known = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return pid_.has_value() || result_.has_value();
  };
  mu_.AwaitWithTimeout(absl::Condition(&known), limit);
  if (pid_.has_value()) return *pid_;
  if (result_.has_value() && !result_->ok()) return result_->status();
  if (result_.has_value()) return absl::InternalError("the Exec ended before it started");
  return absl::DeadlineExceededError("the sandbox's init did not start the Exec in time");
}

std::optional<pid_t> WarmExecState::pid() {
  absl::MutexLock lock(&mu_);
  return pid_;
}

std::optional<absl::StatusOr<int>> WarmExecState::result() {
  absl::MutexLock lock(&mu_);
  return result_;
}

WarmExec::WarmExec(std::shared_ptr<WarmExecState> state, UniqueFd stdin_w, UniqueFd stdout_r,
                   UniqueFd stderr_r, std::function<void(int)> signal,
                   std::function<void(const std::string&)> end_sandbox)
    : state_(std::move(state)),
      stdin_(std::move(stdin_w)),
      stdout_(std::move(stdout_r)),
      stderr_(std::move(stderr_r)),
      signal_(std::move(signal)),
      end_sandbox_(std::move(end_sandbox)) {}

WarmExec::~WarmExec() {
  // Never left running: an Exec dropped before its end is killed (and its cgroup, whatever it
  // still holds, with it).
  if (!state_->result().has_value()) signal_(SIGKILL);
  if (cgroup_ != nullptr && release_) release_(std::move(cgroup_));
}

void WarmExec::SetCgroup(std::unique_ptr<Cgroup> cgroup, const Cgroup* session,
                         std::function<void(std::unique_ptr<Cgroup>)> release) {
  cgroup_ = std::move(cgroup);
  session_ = session;
  release_ = std::move(release);
  if (cgroup_ != nullptr) own_at_start_ = cgroup_->Usage().value_or(CgroupUsage());
  if (session_ != nullptr) session_at_start_ = session_->Usage().value_or(CgroupUsage());
}

std::optional<CgroupUsage> WarmExec::Usage() const {
  if (cgroup_ == nullptr) return std::nullopt;
  // Its own cgroup counts its forks; the session's (whose limits they are) its memory and CPU
  // while it ran — shared with Execs running alongside, if any.
  const CgroupUsage own = cgroup_->Usage().value_or(CgroupUsage());
  const CgroupUsage now =
      session_ != nullptr ? session_->Usage().value_or(CgroupUsage()) : CgroupUsage();
  CgroupUsage usage;
  usage.pids_max_hits = own.pids_max_hits - own_at_start_.pids_max_hits;
  usage.pids_current = own.pids_current;  // its peak is sampled: a reused cgroup's spans Execs
  usage.oom_kills = now.oom_kills - session_at_start_.oom_kills;
  usage.cpu_usage_us = now.cpu_usage_us - session_at_start_.cpu_usage_us;
  usage.memory_peak_bytes = now.memory_peak_bytes;  // the session's peak so far
  return usage;
}

void WarmExec::SignalGroup(int sig) {
  if (!state_->result().has_value()) signal_(sig);
}

absl::StatusOr<int> WarmExec::Reap() {
  std::optional<absl::StatusOr<int>> result = state_->result();
  if (!result.has_value()) return absl::FailedPreconditionError("the Exec has not ended");
  return *result;
}

}  // namespace ccsandbox::launcher
