// Drives one started command (a SupervisedProcess) to its end: feeds stdin, streams stdout/stderr
// as they arrive, enforces the timeout, honours Signal requests and cancellation, and reports how
// the run ended. Independent of gRPC: events go to an EventSink.
//
// Enforcement never waits on the receiver: Emit only queues, and a receiver that does not
// keep up gets back-pressure instead of memory — while the sink is not Ready the supervisor
// reads none of the command's output, so the command blocks on its own pipes, and the
// timeout, Signal requests and cancellation still act within one poll.
#ifndef CCSANDBOX_LAUNCHER_RUN_SUPERVISOR_H_
#define CCSANDBOX_LAUNCHER_RUN_SUPERVISOR_H_

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "launcher/run_control.h"
#include "launcher/supervised_process.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::launcher {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Hands `event` on without waiting for the receiver. False when the receiver is gone; the
  // run is then killed.
  virtual bool Emit(const v1::SandboxEvent& event) = 0;
  // As Emit, but first waits while the sink is not Ready, until the run is ending: for
  // producers other than the supervising thread whose waiting slows the command itself (the
  // create guard holds the trapped call meanwhile).
  virtual bool EmitWhenReady(const v1::SandboxEvent& event) { return Emit(event); }
  // True once the receiver has cancelled or disconnected.
  virtual bool Cancelled() = 0;
  // Back-pressure: false while the receiver has not taken enough of what was emitted; the
  // supervisor then reads no output until ready_fd() turns readable (or its next poll).
  virtual bool Ready() { return true; }
  virtual int ready_fd() { return -1; }
};

struct SuperviseOptions {
  std::string stdin_data;
  std::chrono::milliseconds timeout{0};  // 0 = none
  // After the command exits, how long to keep draining output still held open elsewhere. The
  // clock stops while the sink is not Ready (the output of a command that exited by itself is
  // not cut because its receiver is slow) ...
  std::chrono::milliseconds drain_limit{2000};
  // ... but a receiver that takes nothing for this long loses the rest of the pipes.
  std::chrono::milliseconds stall_limit{120000};
  // Parse stderr for denials and emit a violation event after each stderr event that
  // reports one (native sandboxes only: unwrapped there is nothing to observe).
  bool report_violations = false;
  // The run's cgroup counters at its end (unset: limits are not enforced): they go into the
  // exit / killed event, and a run the OOM killer or the pids limit ended is reported as
  // killed{"oom"} / killed{"pids"} whatever its exit status says.
  std::function<std::optional<v1::SandboxUsage>()> usage;
  // Polled while the run goes on (about every 50 ms): true once it hit the pids limit (a fork
  // was refused). The run is then killed{"pids"}: a fork bomb is stopped, not left spinning.
  std::function<bool()> pids_limit_hit;
};

enum class RunOutcome { kExited, kKilled, kCancelled };

// Emits stdout / stderr (and violation) events, then exactly one exit or killed event
// unless the receiver cancelled. Returns when the process is reaped and its process group
// signalled.
RunOutcome Supervise(SupervisedProcess& process, RunControl& control,
                     const SuperviseOptions& options, EventSink& sink);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_RUN_SUPERVISOR_H_
