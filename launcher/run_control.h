// The out-of-band controls of one running command: a signal request from the Signal RPC
// (delivered through an eventfd — a pipe where there is none, macOS — so the supervising loop
// wakes at once) and cancellation.
#ifndef CCSANDBOX_LAUNCHER_RUN_CONTROL_H_
#define CCSANDBOX_LAUNCHER_RUN_CONTROL_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/kill_cause.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher {

class RunControl {
 public:
  struct SignalRequest {
    int signal;
    KillCause cause;  // the `killed` event's, if the signal ends the run
  };

  static absl::StatusOr<std::unique_ptr<RunControl>> Create();

  // Queues `signal` for the run's process group; the latest request wins.
  void RequestSignal(int signal, KillCause cause);
  // Takes the queued request, if any, and clears the wake-up fd.
  std::optional<SignalRequest> TakeRequest();
  // Readable while a request is queued.
  int wake_fd() const { return wake_.get(); }

 private:
  RunControl() = default;
  absl::Mutex mu_;
  std::optional<SignalRequest> pending_ ABSL_GUARDED_BY(mu_);
  UniqueFd wake_;
  UniqueFd wake_write_;  // the pipe's write end (no eventfd); invalid with an eventfd
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_RUN_CONTROL_H_
