// What the run supervisor (run_supervisor.h) drives: one started command's pipes, its end, and
// signals to all of it. A one-shot run's bwrap process (SandboxProcess) is one; an Exec in a
// warm sandbox (warm/warm_exec.h) is the other.
#ifndef CCSANDBOX_LAUNCHER_SUPERVISED_PROCESS_H_
#define CCSANDBOX_LAUNCHER_SUPERVISED_PROCESS_H_

#include <string>

#include "absl/status/statusor.h"

namespace ccsandbox::launcher {

class SupervisedProcess {
 public:
  virtual ~SupervisedProcess() = default;

  virtual int stdin_fd() const = 0;  // -1 once closed
  virtual int stdout_fd() const = 0;
  virtual int stderr_fd() const = 0;
  virtual void CloseStdin() = 0;
  virtual void CloseStdout() = 0;
  virtual void CloseStderr() = 0;
  // Readable once the command has ended (Reap then does not block).
  virtual int exit_fd() const = 0;
  // Signals every process of the command. A no-op once it has ended.
  virtual void SignalGroup(int sig) = 0;
  // The command's wait status; an error when its end cannot be known (its sandbox died with
  // it), whose message the run then reports as the reason it was killed.
  virtual absl::StatusOr<int> Reap() = 0;
  // Called once when the command has not ended long after SIGKILL: end it by any means (a warm
  // Exec ends its whole sandbox). Its end is then reported through exit_fd / Reap as usual.
  virtual void ForceEnd(const std::string& why) {}
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SUPERVISED_PROCESS_H_
