// Test-only: a fake launcher for the broker's tests. A SandboxLauncher service that plays the
// launcher's side of the contract (starting -> ready -> stdout / stderr -> exit | killed; a
// cancelled call kills its run; Signal reaches a registered run). Nothing is run and no bwrap is
// needed.
//
// The fake is served on a Unix socket, reached through the daemon's own LauncherLink
// (ConnectLauncher): the broker's relay reads the launcher's stream with gRPC's asynchronous API
// and ends a run by cancelling its ClientContext, which a hand-written StubInterface could
// neither drive nor observe. Serving the fake over a real channel keeps the relay, the
// cancellation and the reconnect-after-restart path exactly the daemon's.
#ifndef CCSANDBOX_BROKER_FAKE_LAUNCHER_H_
#define CCSANDBOX_BROKER_FAKE_LAUNCHER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/launcher.grpc.pb.h"

namespace ccsandbox::broker::testing {

inline constexpr int kFakePid = 4242;
inline constexpr char kLostMessage[] = "the fake launcher is going away";

// The launcher's side of the contract, with "programs" chosen by argv[0]:
//   exit [CODE]  starting, ready, "out\n" on stdout, "err\n" on stderr, exit CODE (default 0)
//   hold         starting, ready, then waits: a Signal ends it with killed (the signal's reason
//                and number), a cancelled call ends it with CANCELLED (the launcher kills it)
//   lose         starting, ready, then the call fails with UNAVAILABLE, as when the launcher
//                goes away mid-run
//   mute         sends nothing and is not registered (a Signal misses it) until the call is
//                cancelled: a run the launcher is still setting up
// Every event is labelled with a wrong session id and backend: labelling is the broker's job.
// A native session's sandbox (StartSandbox) is held like a `hold` run.
class FakeLauncher final : public v1::SandboxLauncher::Service {
 public:
  explicit FakeLauncher(v1::LauncherProbeResponse probe) : probe_(std::move(probe)) {}

  grpc::Status Probe(grpc::ServerContext*, const v1::LauncherProbeRequest*,
                     v1::LauncherProbeResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++probes_;
    *response = probe_;
    return grpc::Status::OK;
  }

  grpc::Status Run(grpc::ServerContext* context, const v1::LaunchPlan* plan,
                   grpc::ServerWriter<v1::SandboxEvent>* writer) override;
  grpc::Status Signal(grpc::ServerContext*, const v1::SignalRequest* request,
                      v1::SignalResponse* response) override;
  // A warm sandbox: `warm`, then held until a Signal naming it (ended with its reason, as the
  // launcher's stop) or a cancelled call; EndSandbox ends it by itself. Refused
  // (FAILED_PRECONDITION) after RefuseSandboxes.
  grpc::Status StartSandbox(grpc::ServerContext* context, const v1::LaunchPlan* plan,
                            grpc::ServerWriter<v1::SandboxLifecycle>* writer) override;

  // The sandbox `id` ends by itself with `reason`, as when its init dies.
  void EndSandbox(const std::string& id, const std::string& reason) {
    absl::MutexLock lock(&mu_);
    if (held_.count(id) > 0) {
      v1::SignalRequest ended;
      ended.set_reason(reason);
      held_[id] = ended;
    }
  }
  void RefuseSandboxes() {
    absl::MutexLock lock(&mu_);
    refuse_sandboxes_ = true;
  }
  // The plans StartSandbox got, in order.
  std::vector<v1::LaunchPlan> sandbox_plans() {
    absl::MutexLock lock(&mu_);
    return sandbox_plans_;
  }
  // Signal answers as for a run it has not registered yet.
  void MissSignals() {
    absl::MutexLock lock(&mu_);
    miss_signals_ = true;
  }
  std::vector<v1::LaunchPlan> plans() {
    absl::MutexLock lock(&mu_);
    return plans_;
  }
  std::vector<v1::SignalRequest> signals() {
    absl::MutexLock lock(&mu_);
    return signals_;
  }
  // How a held run ended, "signalled" or "cancelled", once it has ("" after 10 s). A cancelled
  // call ends on the broker's side without waiting for the launcher to have seen it.
  std::string AwaitOutcome(const std::string& run_id) {
    absl::MutexLock lock(&mu_);
    auto ended = [&] { return outcomes_.count(run_id) > 0; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ended), absl::Seconds(10))) return "";
    return outcomes_[run_id];
  }
  int probes() {
    absl::MutexLock lock(&mu_);
    return probes_;
  }

 private:
  absl::Mutex mu_;
  const v1::LauncherProbeResponse probe_;
  int probes_ ABSL_GUARDED_BY(mu_) = 0;
  bool miss_signals_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<v1::LaunchPlan> plans_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::LaunchPlan> sandbox_plans_ ABSL_GUARDED_BY(mu_);
  bool refuse_sandboxes_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<v1::SignalRequest> signals_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::optional<v1::SignalRequest>> held_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> outcomes_ ABSL_GUARDED_BY(mu_);
};

// A probe answer with the create guard available.
v1::LauncherProbeResponse GuardAvailable();

// The fake launcher's server; Stop and Start again on the same socket is a launcher restart.
class LauncherServer {
 public:
  explicit LauncherServer(std::string socket) : socket_(std::move(socket)) {}
  ~LauncherServer() { Stop(); }

  void Start(v1::LauncherProbeResponse probe = GuardAvailable());
  // In-flight calls are cancelled; returns once their handlers have.
  void Stop();
  FakeLauncher& fake() { return *fake_; }

 private:
  const std::string socket_;
  std::unique_ptr<FakeLauncher> fake_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace ccsandbox::broker::testing

#endif  // CCSANDBOX_BROKER_FAKE_LAUNCHER_H_
