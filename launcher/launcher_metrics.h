// The launcher's Prometheus metrics (docs/service.md lists them): the create guard's trapped
// calls by outcome and how long each was held. A default-constructed LauncherMetrics counts
// nothing: what the launcher holds when metrics are off. Copies share the counters, which live
// in the endpoint's registry (it outlives every service and run).
//
//   LauncherMetrics metrics(endpoint.get());  // null endpoint: off
//   options.on_call = [metrics](CallOutcome o, absl::Duration d) { metrics.CreateGuardCall(o, d);
//   };
#ifndef CCSANDBOX_LAUNCHER_LAUNCHER_METRICS_H_
#define CCSANDBOX_LAUNCHER_LAUNCHER_METRICS_H_

#include "absl/time/time.h"
#include "base/metrics.h"
#include "launcher/create_guard/handle_call.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"

namespace ccsandbox::launcher {

class LauncherMetrics {
 public:
  LauncherMetrics() = default;  // off
  explicit LauncherMetrics(MetricsEndpoint* endpoint);

  // One call trapped by a run's create guard, answered after `held`.
  void CreateGuardCall(CallOutcome outcome, absl::Duration held) const;

 private:
  prometheus::Family<prometheus::Counter>* guard_calls_ = nullptr;
  prometheus::Histogram* guard_seconds_ = nullptr;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_LAUNCHER_METRICS_H_
