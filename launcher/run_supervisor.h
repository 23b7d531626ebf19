// Drives one started SandboxProcess to its end: feeds stdin, streams stdout/stderr as they
// arrive, enforces the timeout, honours Signal requests and cancellation, and reports how
// the run ended. Independent of gRPC: events go to an EventSink.
#ifndef CCSANDBOX_LAUNCHER_RUN_SUPERVISOR_H_
#define CCSANDBOX_LAUNCHER_RUN_SUPERVISOR_H_

#include <chrono>
#include <functional>
#include <string>

#include "launcher/run_control.h"
#include "launcher/sandbox_process.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::launcher {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // False when the receiver is gone; the run is then killed.
  virtual bool Emit(const v1::SandboxEvent& event) = 0;
  // True once the receiver has cancelled or disconnected.
  virtual bool Cancelled() = 0;
};

struct SuperviseOptions {
  std::string stdin_data;
  std::chrono::milliseconds timeout{0};  // 0 = none
  // After the command exits, how long to keep draining output still held open elsewhere.
  std::chrono::milliseconds drain_limit{2000};
  // Parse stderr for denials and emit a violation event after each stderr event that
  // reports one (native sandboxes only: unwrapped there is nothing to observe).
  bool report_violations = false;
};

enum class RunOutcome { kExited, kKilled, kCancelled };

// Emits stdout / stderr (and violation) events, then exactly one exit or killed event
// unless the receiver cancelled. Returns when the process is reaped and its process group signalled.
RunOutcome Supervise(SandboxProcess& process, RunControl& control,
                     const SuperviseOptions& options, EventSink& sink);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_RUN_SUPERVISOR_H_
