// The daemons' shared metrics flags (--metrics-listen, --allow-remote-metrics) and the endpoint
// they ask for.
//
//   absl::StatusOr<std::unique_ptr<MetricsEndpoint>> metrics = StartMetricsFromFlags("broker");
//   if (!metrics.ok()) return CannotStart(metrics.status(), 2);
//   BrokerMetrics counters(metrics->get());  // null endpoint: metrics are off, counting is a no-op
#ifndef CCSANDBOX_BASE_METRICS_FLAGS_H_
#define CCSANDBOX_BASE_METRICS_FLAGS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/metrics.h"

namespace ccsandbox {

// Null without --metrics-listen (metrics off); INVALID_ARGUMENT for an address refused by
// CheckMetricsListen, UNAVAILABLE when it cannot be bound. Logs the URL it serves.
absl::StatusOr<std::unique_ptr<MetricsEndpoint>> StartMetricsFromFlags(const std::string& daemon);

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_METRICS_FLAGS_H_
