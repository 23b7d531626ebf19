// The broker's side of warm sandboxes: one StartSandbox call held open per native session for
// the sandbox's life. Start returns once the launcher says the sandbox is warm (or why it could
// not start); if the sandbox later ends by itself — its init died, it was killed on the host,
// the launcher went away — `on_end` gets the reason once. Stop ends a sandbox on purpose (the
// launcher's Signal naming it) and returns once the launcher has ended it, so nothing of the
// session is left running when Destroy returns.
//
//   SandboxWatch watch;
//   absl::StatusOr<uint32_t> pid = watch.Start(stub, plan, [&](const std::string& why) {...});
//   watch.Stop(stub, plan.run_id(), "session destroyed");
//
// Each held call has a thread of its own, blocked in Read while the sandbox lives. The
// destructor cancels every call (the launcher then ends those sandboxes) and joins them.
#ifndef CCSANDBOX_BROKER_SANDBOX_WATCH_H_
#define CCSANDBOX_BROKER_SANDBOX_WATCH_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/launcher.grpc.pb.h"

namespace ccsandbox::broker {

class SandboxWatch {
 public:
  SandboxWatch() = default;
  ~SandboxWatch();
  SandboxWatch(const SandboxWatch&) = delete;
  SandboxWatch& operator=(const SandboxWatch&) = delete;

  // Starts the sandbox of `plan` (its run_id names it) and waits until it is warm. On the
  // watch's thread: `on_usage` with the session's counters after each Exec, `on_end` once if the
  // sandbox ends by itself.
  absl::StatusOr<v1::SandboxLifecycle::Warm> Start(
      v1::SandboxLauncher::StubInterface& launcher, const v1::LaunchPlan& plan,
      std::function<void(const std::string&)> on_end,
      std::function<void(const v1::SandboxUsage&)> on_usage = nullptr);
  // Ends the sandbox `id` and waits, at most `limit`, for the launcher to have ended it (then
  // cancels the call). A no-op for an unknown id.
  void Stop(v1::SandboxLauncher::StubInterface& launcher, const std::string& id,
            const std::string& reason, absl::Duration limit = absl::Seconds(10));

 private:
  struct Watched;
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Watched>> watched_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_SANDBOX_WATCH_H_
