// Ctrl-C, SIGTERM and SIGHUP in sandboxctl: while a run streams they cancel it (the broker kills
// the run's sandbox; a one-shot session ends with it, a started session stays) and sandboxctl
// exits 128+signal; at any other time they end sandboxctl as they would any program.
//
//   int main() {
//     BlockCliStopSignals();  // before any thread: gRPC's threads inherit the mask
//     ...
//     grpc::ClientContext ctx;
//     CancelOnStopSignal scope([&ctx] { ctx.TryCancel(); });
//     ... stream ...
//     if (scope.signal() != 0) return 128 + scope.signal();
//   }
//
// The signals are blocked in every thread and taken by one waiting thread, so none can take the
// default action in a thread the kernel picked (a gRPC thread) while a run is being cancelled.
#ifndef CCSANDBOX_BROKER_CLI_SIGNALS_H_
#define CCSANDBOX_BROKER_CLI_SIGNALS_H_

#include <functional>

namespace ccsandbox::broker {

// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (and every thread it starts from now
// on) and starts the thread that waits for them. Call once, before any other thread starts.
void BlockCliStopSignals();

// While alive, a stop signal runs `cancel` (on the waiting thread, never concurrently with this
// object's destruction) instead of ending the process.
class CancelOnStopSignal {
 public:
  explicit CancelOnStopSignal(std::function<void()> cancel);
  ~CancelOnStopSignal();
  CancelOnStopSignal(const CancelOnStopSignal&) = delete;
  CancelOnStopSignal& operator=(const CancelOnStopSignal&) = delete;

  // The first stop signal taken while alive; 0 when none.
  int signal() const;
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_SIGNALS_H_
