// A child process started with posix_spawn: its own session and process group, piped stdio, a
// pollable end. The macOS launch's process (sandbox-exec, and the `log stream` reader): the
// launcher's SandboxProcess needs Linux (pidfd, mount namespaces), this needs POSIX plus one
// platform call for exit_fd — a pidfd on Linux (where it is tested), a kqueue watching the pid's
// exit on macOS (compiled only there; never compiled yet). The destructor kills the group and
// reaps the child: no zombie, no orphan, on any path.
//
//   absl::StatusOr<std::unique_ptr<SpawnedProcess>> p =
//       SpawnedProcess::Spawn({"/usr/bin/sandbox-exec", argv, envp, cwd});
//   poll on p->stdout_fd(), p->stderr_fd(), p->exit_fd() ...;  int status = *p->Reap();
//
// Unlike SandboxProcess there is no death signal: if the launcher dies, the child is not killed
// with it (macOS has no PR_SET_PDEATHSIG); the launcher's restart must end what it left.
#ifndef CCSANDBOX_LAUNCHER_MACOS_SPAWNED_PROCESS_H_
#define CCSANDBOX_LAUNCHER_MACOS_SPAWNED_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "launcher/supervised_process.h"

namespace ccsandbox::launcher::macos {

struct SpawnSpec {
  std::string executable;         // absolute path; never searched
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> envp;  // "NAME=value", the complete environment
  std::string cwd;                // empty: the launcher's
};

class SpawnedProcess : public SupervisedProcess {
 public:
  // Every fd but the three pipes is closed in the child. FAILED_PRECONDITION naming the step
  // when the child cannot be started (posix_spawn's error: a missing executable, a bad cwd).
  static absl::StatusOr<std::unique_ptr<SpawnedProcess>> Spawn(const SpawnSpec& spec);

  ~SpawnedProcess() override;
  SpawnedProcess(const SpawnedProcess&) = delete;
  SpawnedProcess& operator=(const SpawnedProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stdin_fd() const override { return stdin_.get(); }
  int stdout_fd() const override { return stdout_.get(); }
  int stderr_fd() const override { return stderr_.get(); }
  void CloseStdin() override { stdin_.Reset(); }
  void CloseStdout() override { stdout_.Reset(); }
  void CloseStderr() override { stderr_.Reset(); }
  int exit_fd() const override { return exit_.get(); }  // readable once the child has ended
  // Signals the child's process group; a no-op once reaped (a recycled pid is never signalled).
  void SignalGroup(int sig) override;
  // Waits for the child and returns its wait status.
  absl::StatusOr<int> Reap() override;

 private:
  SpawnedProcess() = default;

  pid_t pid_ = -1;
  bool reaped_ = false;
  UniqueFd stdin_, stdout_, stderr_, exit_;
};

}  // namespace ccsandbox::launcher::macos

#endif  // CCSANDBOX_LAUNCHER_MACOS_SPAWNED_PROCESS_H_
