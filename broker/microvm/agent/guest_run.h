// One command run in the guest (docs/microvm.md, "Exec"): started the way every workload starts
// (guest_spawn.h), its stdin fed from kStdin frames, its stdout and stderr relayed as frames,
// its end reported as kExit. The agent serves one run or terminal at a time.
//
//   GuestRun run;
//   run.Start(request, root, &error);            // then kStarted
//   run.Fill(&fds);  poll(fds, run.PollTimeoutMs());  run.Handle(fd, port);  run.MaybeFinish(port);
//
// No survivor, as a native run's reaper: once the command's main process has exited (or the
// run was killed), every other process in the guest is SIGKILLed — background jobs, and
// processes that left its session or process group — and the dead are reaped; output still in
// the pipes is relayed for at most kRunDrain, then the exit goes out. The guest runs nothing
// else meanwhile (the agent is PID 1, kill(-1) spares only it), so these are all the run's.
// Orphans the guest's PID 1 inherits during a run are reaped as they die.
#ifndef CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_RUN_H_
#define CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_RUN_H_

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "broker/microvm/agent_frame.h"
#include "broker/microvm/guest_setup.h"

namespace ccsandbox::broker::microvm {

// How long a run's last output is relayed once its main process has ended and the rest of the
// guest was killed (a process stuck in the kernel may hold a pipe open).
inline constexpr std::chrono::milliseconds kRunDrain{2000};

class GuestRun {
 public:
  GuestRun() = default;
  GuestRun(const GuestRun&) = delete;
  GuestRun& operator=(const GuestRun&) = delete;
  ~GuestRun() { Close(); }

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // Starts `request` in the guest's root (`root`: the setup applied, or null before one);
  // false (and why) when it could not (entering the root, chdir, exec).
  bool Start(const ExecRequest& request, const GuestSetup* root, std::string* error);
  // SIGKILLs the run: its main process and every other process in the guest.
  void Kill();
  void AddStdin(const std::string& bytes);
  void CloseStdin();

  // The fds to poll (after the port), and how long a poll may wait (-1: until one is ready).
  void Fill(std::vector<pollfd>* fds) const;
  int PollTimeoutMs() const;
  void Handle(const pollfd& p, int port);
  // Reaps what died; once the main process has, sweeps the guest; once its output is drained,
  // sends kExit and is ready for the next run.
  void MaybeFinish(int port);

 private:
  void FlushStdin();
  void Reap();
  void Close();

  pid_t pid_ = -1;
  int pidfd_ = -1;  // readable once the main process has exited
  int stdin_ = -1, stdout_ = -1, stderr_ = -1;
  std::string pending_;
  bool stdin_eof_ = false;
  bool exited_ = false;  // the main process was reaped; status_ holds how it ended
  int status_ = 0;
  std::chrono::steady_clock::time_point drain_until_;
};

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_RUN_H_
