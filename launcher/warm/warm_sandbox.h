// One warm sandbox in the launcher: the session's bwrap process, whose init (shim/init.h) runs
// each Exec, and the launcher's end of the init's channel. Serve runs on the thread of the
// StartSandbox call for the sandbox's whole life (bwrap dies with that thread: die-with-parent);
// StartExec is called from the Run calls of the session's Execs, on their own threads.
//
//   auto sandbox = std::make_shared<WarmSandbox>(id, std::move(process), std::move(channel));
//   std::string why = sandbox->Serve(cancelled, [&](pid_t pid) { write warm; });
//   ... elsewhere: absl::StatusOr<std::unique_ptr<WarmExec>> exec = sandbox->StartExec(...);
//
// When the sandbox ends — the broker cancels, the init exits or is killed, bwrap dies — every
// Exec still running ends with the reason (its run reports killed), and later StartExec calls
// fail with FAILED_PRECONDITION. The channel from the init is read as untrusted: malformed
// frames or descriptors end the sandbox.
#ifndef CCSANDBOX_LAUNCHER_WARM_WARM_SANDBOX_H_
#define CCSANDBOX_LAUNCHER_WARM_WARM_SANDBOX_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"
#include "launcher/cgroups/cgroup.h"
#include "launcher/cgroups/cgroup_pool.h"
#include "launcher/run_control.h"
#include "launcher/sandbox_process.h"
#include "launcher/shim/init_protocol.h"
#include "launcher/warm/warm_exec.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::launcher {

class WarmSandbox {
 public:
  // `cgroup`: the session's (null where limits are not enforced); everything in it is killed
  // and it is removed when the sandbox ends.
  WarmSandbox(std::string id, std::unique_ptr<SandboxProcess> process, UniqueFd channel,
              PooledCgroup cgroup = nullptr);
  ~WarmSandbox();

  const std::string& id() const { return id_; }

  // What Serve tells its caller, on Serve's thread.
  struct Hooks {
    std::function<void(pid_t)> on_ready;  // once the init is ready, with bwrap's pid
    std::function<void()> on_exec_ended;  // after each Exec's end (its counters are final)
  };
  // Runs until the sandbox ends or `cancelled` turns true (then ends it), calling `hooks`.
  // Returns why the sandbox ended. Not ready within `ready_limit`: the sandbox is ended.
  // A request on `control` (the Signal RPC naming the sandbox) stops it too, with its reason.
  std::string Serve(const std::function<bool()>& cancelled, RunControl& control, const Hooks& hooks,
                    absl::Duration ready_limit = absl::Seconds(30));
  // The session cgroup's counters (pids_peak: the kernel's mark, or the count now); nullopt
  // without a cgroup.
  std::optional<CgroupUsage> Usage() const;
  bool was_ready() const;
  // Ends the sandbox from any thread (Serve returns `reason`).
  void Stop(const std::string& reason);
  // Freezes or thaws every process of the sandbox (its cgroup); UNIMPLEMENTED without a
  // cgroup that can freeze, FAILED_PRECONDITION once the sandbox is ending (its processes are
  // being killed: never frozen again).
  absl::Status Freeze(bool frozen);
  // An Exec that did not end after SIGKILL: ends the sandbox, unless it is frozen (the kill
  // then lands once it is thawed).
  void ForceEnd(const std::string& why);

  // Starts one Exec: `env` is its complete environment ("NAME=value"); `guard_channel` the
  // sandbox end of its create guard channel when the sandbox has a guard (else invalid).
  // Returns once the init has started it.
  absl::StatusOr<std::unique_ptr<WarmExec>> StartExec(const std::vector<std::string>& argv,
                                                      const std::vector<std::string>& env,
                                                      const std::string& workdir,
                                                      UniqueFd guard_channel);

 private:
  // Reads the init's frames; UNAVAILABLE once it closed the channel.
  absl::Status ReadFrames(const Hooks& hooks);
  void OnFrame(const InitMessage& message);
  // Reaps the exited bwrap; why it ended, with the last of what it said.
  std::string Reaped();
  // An Exec's cgroup: a spare one, or a new one below the session's.
  absl::StatusOr<std::unique_ptr<Cgroup>> TakeExecCgroup();
  void ReturnExecCgroup(std::unique_ptr<Cgroup> done);
  void Signal(uint64_t exec_id, int sig);
  // Marks the sandbox dead: every Exec ends with `reason`; no new one starts.
  void Die(const std::string& reason);
  std::string DrainOutput(int fd, bool is_stderr);

  const std::string id_;
  std::unique_ptr<SandboxProcess> process_;  // touched by the Serve thread only
  PooledCgroup cgroup_;                      // the session's; retired with the sandbox
  const UniqueFd channel_;
  InitFrameReader reader_{/*accept_fds=*/false};
  std::string stderr_tail_;  // the last of what bwrap and the init said, for the reason
  int logged_lines_ = 0;

  const UniqueFd stop_;  // eventfd: Stop was called
  mutable absl::Mutex mu_;
  std::string stop_reason_ ABSL_GUARDED_BY(mu_);
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  bool frozen_ ABSL_GUARDED_BY(mu_) = false;
  // Set, with freeze_mu_ held too, before the end kills the session's processes.
  bool ending_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<Cgroup>> spare_cgroups_ ABSL_GUARDED_BY(mu_);
  uint64_t next_cgroup_ ABSL_GUARDED_BY(mu_) = 1;
  std::string dead_ ABSL_GUARDED_BY(mu_);  // why it ended; empty while it runs
  uint64_t next_exec_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::shared_ptr<WarmExecState>> execs_ ABSL_GUARDED_BY(mu_);
  absl::Mutex send_mu_;    // one frame at a time on the channel
  absl::Mutex freeze_mu_;  // one Freeze at a time, and none across the start of the end; before mu_
};

// The warm sandboxes of one caller, by id, with the plans that started them.
class WarmSandboxes {
 public:
  struct Entry {
    std::shared_ptr<WarmSandbox> sandbox;
    v1::LaunchPlan plan;
  };
  // ALREADY_EXISTS for a taken id.
  absl::Status Add(const std::string& id, Entry entry);
  void Remove(const std::string& id);
  // FAILED_PRECONDITION when there is none by that id (it ended, or the launcher restarted).
  absl::StatusOr<Entry> Find(const std::string& id) const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_WARM_WARM_SANDBOX_H_
