// One Exec of a warm sandbox, inside it: the reaper process the init forks for each Exec. It is
// a child subreaper, so everything the command starts — double-forked, setsid()ed, orphaned —
// stays its descendant; it runs the command, and when the command's main process ends (or the
// init asks, over `control`) it kills every descendant, reaps them all and exits with the
// command's code (128 + signal when it was killed). No process of the Exec outlives it.
//
//   child of the init:  _exit(RunReaper(request));   // never returns otherwise
//
// The command itself is started in a new session, with its stdio, its environment, its
// working directory and, before exec, the create guard (when the sandbox has one) or a
// Landlock domain scoping its signals: either way it cannot signal the reaper or the init, so
// it cannot end its own tracking (nor change their limits or priorities: the seccomp baseline).
// Should the reaper still fail to see or end the Exec's processes (no /proc entry it can read,
// a kill loop that does not converge), it kills itself: the init then ends the whole sandbox
// rather than let a process of the Exec outlive it.
#ifndef CCSANDBOX_LAUNCHER_SHIM_REAPER_H_
#define CCSANDBOX_LAUNCHER_SHIM_REAPER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "launcher/shim/shim_args.h"

namespace ccsandbox::launcher {

struct ReaperRequest {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value": the complete environment
  std::string workdir;
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  // The session's create guard with this Exec's channel; channel_fd -1 = no guard.
  CreateGuardShimConfig guard;
  const std::string* guard_program = nullptr;  // the create filter, built once by the init
  // Signal numbers from the init (one int each); EOF = the init is gone: kill everything.
  int control_fd = -1;
  // The Exec's cgroup.procs files (opened by the launcher): the reaper joins them before it
  // starts the command, so everything of the Exec is counted, limited and killable there.
  std::vector<int> cgroup_fds;
};

// Runs the Exec to its end; returns the exit code for the reaper's own _exit.
int RunReaper(const ReaperRequest& request);

// The pids of every process whose parent chain leads to `ancestor`, read from `proc_root`
// (a /proc of the caller's pid namespace); an error when it cannot be read whole. Exposed for
// tests.
absl::StatusOr<std::vector<int>> Descendants(int ancestor, const std::string& proc_root = "/proc");

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SHIM_REAPER_H_
