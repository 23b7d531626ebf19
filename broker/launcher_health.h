// Whether the launcher answers, watched once a second: the broker's gRPC health service says
// NOT_SERVING (overall, "", and for ccsandbox.v1.SandboxBroker) while it does not and SERVING
// again when it does; the policy and workspace services do not need the launcher and stay
// SERVING. Each change is logged once: a warning naming the socket and the errno, then an info
// line when it is back.
//
//   LauncherHealth health(channel, "unix:/run/ccsandbox/launcher.sock",
//                         server->GetHealthCheckService());
#ifndef CCSANDBOX_BROKER_LAUNCHER_HEALTH_H_
#define CCSANDBOX_BROKER_LAUNCHER_HEALTH_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "broker/broker_metrics.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"

namespace ccsandbox::broker {

// "launcher not reachable at PATH: <errno text>" when a connect() to the launcher's Unix socket
// fails now; "" when it accepts (or the address is not unix:PATH and the channel must tell).
std::string LauncherUnreachable(const std::string& address);

class LauncherHealth {
 public:
  // `health` (the server's) and `channel` outlive this object.
  // `metrics` gets whether the launcher answers and each time it is back.
  LauncherHealth(std::shared_ptr<grpc::ChannelInterface> channel, std::string address,
                 grpc::HealthCheckServiceInterface* health, BrokerMetrics metrics = {});
  ~LauncherHealth();  // stops watching

 private:
  void Watch();

  const std::shared_ptr<grpc::ChannelInterface> channel_;
  const std::string address_;
  grpc::HealthCheckServiceInterface* const health_;
  const BrokerMetrics metrics_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_LAUNCHER_HEALTH_H_
