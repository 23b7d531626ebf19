#include "base/metrics_flags.h"

#include "absl/flags/flag.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, metrics_listen, "",
          "serve Prometheus metrics at http://IP:PORT/metrics (e.g. 127.0.0.1:9464; port 0: any "
          "free one, logged); a loopback address unless --allow-remote-metrics; empty: no metrics");
ABSL_FLAG(
    bool, allow_remote_metrics, false,
    "accept a --metrics-listen address that is not loopback: the metrics (sessions, "
    "commands, refused hosts) are then readable, unauthenticated, by anyone who can reach it");

namespace ccsandbox {

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> StartMetricsFromFlags(const std::string& daemon) {
  const std::string flag = absl::GetFlag(FLAGS_metrics_listen);
  if (flag.empty()) return nullptr;
  const bool allow_remote = absl::GetFlag(FLAGS_allow_remote_metrics);
  absl::StatusOr<std::string> address = CheckMetricsListen(flag, allow_remote);
  if (!address.ok()) return address.status();
  if (!CheckMetricsListen(flag, /*allow_remote=*/false).ok()) {
    spdlog::warn(
        "UNAUTHENTICATED: metrics at {} are not on the loopback; whoever reaches it sees "
        "what runs here",
        flag);
  }
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start(*address, daemon);
  if (!endpoint.ok()) return endpoint.status();
  spdlog::info("metrics at {}", (*endpoint)->url());
  return endpoint;
}

}  // namespace ccsandbox
