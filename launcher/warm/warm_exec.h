// One Exec in a warm sandbox, seen from the launcher: the pipes it was given, and its end as
// the sandbox's init reports it. The run supervisor drives it like any SupervisedProcess;
// signals travel to the Exec's reaper in the sandbox (shim/reaper.h), which delivers them to
// every process of the Exec.
//
//   std::unique_ptr<WarmExec> exec = *sandbox->StartExec(...);   (warm_sandbox.h)
//   Supervise(*exec, control, options, sink);
#ifndef CCSANDBOX_LAUNCHER_WARM_WARM_EXEC_H_
#define CCSANDBOX_LAUNCHER_WARM_WARM_EXEC_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "launcher/cgroups/cgroup.h"
#include "launcher/supervised_process.h"

namespace ccsandbox::launcher {

// What the sandbox's reader thread and the Exec share: its start and its end.
class WarmExecState {
 public:
  WarmExecState();
  // The init started the Exec's reaper (pid in the sandbox's PID namespace).
  void Started(pid_t pid);
  // The Exec ended: a wait status, or why its end cannot be known. Only the first counts.
  void Ended(absl::StatusOr<int> result);
  // Waits until Started or Ended, at most `limit`; the pid, or the reason it never started.
  absl::StatusOr<pid_t> AwaitStart(absl::Duration limit);
  std::optional<pid_t> pid();
  std::optional<absl::StatusOr<int>> result();
  int ended_fd() const { return ended_.get(); }

 private:
  UniqueFd ended_;  // eventfd, readable once ended
  absl::Mutex mu_;
  std::optional<pid_t> pid_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::StatusOr<int>> result_ ABSL_GUARDED_BY(mu_);
};

class WarmExec : public SupervisedProcess {
 public:
  // `signal` delivers a signal to the Exec in its sandbox; `end_sandbox` ends the whole
  // sandbox (ForceEnd).
  WarmExec(std::shared_ptr<WarmExecState> state, UniqueFd stdin_w, UniqueFd stdout_r,
           UniqueFd stderr_r, std::function<void(int)> signal,
           std::function<void(const std::string&)> end_sandbox);
  ~WarmExec() override;

  int stdin_fd() const override { return stdin_.get(); }
  int stdout_fd() const override { return stdout_.get(); }
  int stderr_fd() const override { return stderr_.get(); }
  void CloseStdin() override { stdin_.Reset(); }
  void CloseStdout() override { stdout_.Reset(); }
  void CloseStderr() override { stderr_.Reset(); }
  int exit_fd() const override { return state_->ended_fd(); }
  void SignalGroup(int sig) override;
  absl::StatusOr<int> Reap() override;
  void ForceEnd(const std::string& why) override { end_sandbox_(why); }
  // The Exec's reaper in the sandbox's PID namespace, once started.
  std::optional<pid_t> pid() const { return state_->pid(); }
  // The Exec's own cgroup (below the session's), when limits are enforced; killed and removed
  // with the WarmExec. `session` is the session's, for what is counted there: the memory limit
  // is the session's, so its OOM kills since the Exec started count as the Exec's. (Its pids
  // limit is a little below the session's, so a fork bomb hits its own first.)
  // `release` takes the cgroup back when the Exec is done (for the next Exec).
  void SetCgroup(std::unique_ptr<Cgroup> cgroup, const Cgroup* session,
                 std::function<void(std::unique_ptr<Cgroup>)> release);
  const Cgroup* cgroup() const { return cgroup_.get(); }
  // What the Exec used (nullopt without a cgroup).
  std::optional<CgroupUsage> Usage() const;

 private:
  std::shared_ptr<WarmExecState> state_;
  UniqueFd stdin_, stdout_, stderr_;
  std::function<void(int)> signal_;
  std::function<void(const std::string&)> end_sandbox_;
  std::unique_ptr<Cgroup> cgroup_;
  const Cgroup* session_ = nullptr;
  std::function<void(std::unique_ptr<Cgroup>)> release_;
  CgroupUsage own_at_start_;  // a reused cgroup's counters go on: the Exec's are the deltas
  CgroupUsage session_at_start_;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_WARM_WARM_EXEC_H_
