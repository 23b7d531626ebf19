// One child process in its own process group, with piped stdio and a pidfd. The
// destructor kills the whole group and reaps the child: no zombie, no orphan, on any path.
//
//   absl::StatusOr<std::unique_ptr<SandboxProcess>> p = SandboxProcess::Spawn(spec);
//   poll on p->stdout_fd(), p->stderr_fd(), p->pidfd() ...
//   p->SignalGroup(SIGKILL);  int status = *p->Reap();
#ifndef CCSANDBOX_LAUNCHER_SANDBOX_PROCESS_H_
#define CCSANDBOX_LAUNCHER_SANDBOX_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "launcher/supervised_process.h"

namespace ccsandbox::launcher {

struct Identity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

// A detached mount (open_tree) the child attaches at `target` in its private mount namespace
// before it execs (BindStage).
struct StagedMount {
  int tree_fd;
  std::string target;
  bool directory;
};

struct ProcessSpec {
  std::string executable;            // absolute path; never searched
  std::vector<std::string> argv;     // argv[0] included
  std::vector<std::string> envp;     // "NAME=value", the complete environment
  std::string cwd;                   // chdir before exec; empty keeps the launcher's
  std::optional<Identity> identity;  // switch to this identity before exec
  std::vector<int> inherit_fds;      // kept open across exec at the same numbers (> 2)
  // Non-empty: the child enters a new private mount namespace, mounts a tmpfs (0755) here and
  // attaches `staged` below it, as root, before switching identity. Nothing of it is visible
  // on the host, and it ends with the child's namespace.
  std::string stage_dir;
  std::vector<StagedMount> staged;
  // cgroup.procs files the child joins (writes "0" into) first, as the launcher.
  std::vector<std::string> cgroup_procs;
  // >= 0: a PTY's slave, the child's stdin, stdout and stderr and its controlling terminal
  // (a terminal's shell, for job control); no pipes are made and the stdio fds are -1.
  int tty_fd = -1;
};

class SandboxProcess : public SupervisedProcess {
 public:
  // Forks, moves the child into a new session and process group, attaches the staged
  // mounts in a private mount namespace, switches identity,
  // closes every inherited fd but stdio, and execs. Errors up to and including execve
  // come back as a Status (FAILED_PRECONDITION naming the step), with the child reaped.
  static absl::StatusOr<std::unique_ptr<SandboxProcess>> Spawn(const ProcessSpec& spec);

  ~SandboxProcess() override;
  SandboxProcess(const SandboxProcess&) = delete;
  SandboxProcess& operator=(const SandboxProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stdin_fd() const override { return stdin_.get(); }
  int stdout_fd() const override { return stdout_.get(); }
  int stderr_fd() const override { return stderr_.get(); }
  int pidfd() const { return pidfd_.get(); }  // readable once the child has exited
  int exit_fd() const override { return pidfd_.get(); }
  void CloseStdin() override { stdin_.Reset(); }
  void CloseStdout() override { stdout_.Reset(); }
  void CloseStderr() override { stderr_.Reset(); }

  // Signals the child's whole process group. A no-op once reaped, so a recycled pid is
  // never signalled.
  void SignalGroup(int sig) override;

  // Waits for the child and returns its wait status. Call after pidfd() is readable to
  // avoid blocking; kill the group first if leftovers must not outlive it.
  absl::StatusOr<int> Reap() override;

 private:
  SandboxProcess() = default;

  pid_t pid_ = -1;
  bool reaped_ = false;
  UniqueFd stdin_, stdout_, stderr_, pidfd_;
};

// Searches `path_env` (a PATH value) for `name`; a name with '/' is returned as is.
std::optional<std::string> FindExecutable(const std::string& name, const std::string& path_env);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SANDBOX_PROCESS_H_
