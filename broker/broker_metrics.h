// The broker's Prometheus metrics (docs/service.md lists them): Execs by outcome and their
// latency, violations by action, the egress proxies' connections and refusals, whether the
// launcher answers and how often it came back, and the sessions by state and backend (read from
// the session table at each scrape). A default-constructed BrokerMetrics counts nothing: what
// every component holds when metrics are off. Copies share the counters; they live in the
// endpoint's registry, which outlives every component holding them.
//
//   BrokerMetrics metrics(endpoint.get());  // null endpoint: off
//   config.metrics = metrics;
//   metrics.ExecEnded(BrokerMetrics::ExecOutcome::kExit, absl::Seconds(1.2));
#ifndef CCSANDBOX_BROKER_BROKER_METRICS_H_
#define CCSANDBOX_BROKER_BROKER_METRICS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/metrics.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

class BrokerMetrics {
 public:
  // How an Exec call ended: its run's exit or killed event, an error status before either
  // (refused, launcher unreachable), or its client gone before either.
  enum class ExecOutcome { kExit, kKilled, kError, kCancelled };

  BrokerMetrics() = default;  // off
  explicit BrokerMetrics(MetricsEndpoint* endpoint);

  void ExecEnded(ExecOutcome outcome, absl::Duration took) const;
  // A violation event (a run's, or a session's egress or push refusal), by its action.
  void Violation(const std::string& action) const;
  // A client connection accepted by a session's egress proxy ("http" or "socks5").
  void ProxyConnection(absl::string_view proxy) const;
  // A connection the egress proxies refused (allowlist or connection cap).
  void ProxyRefusal() const;
  // Whether the launcher answers now; `back` when it answers again after it did not.
  void LauncherReachable(bool up, bool back) const;

  // Serves ccsandbox_broker_sessions{state,backend}, counting `list()` at every scrape, while
  // the returned object lives (null when metrics are off).
  std::unique_ptr<ScrapedMetrics> ServeSessions(
      std::function<std::vector<v1::SandboxHandle>()> list) const;

 private:
  MetricsEndpoint* endpoint_ = nullptr;
  prometheus::Family<prometheus::Counter>* execs_ = nullptr;
  prometheus::Histogram* exec_seconds_ = nullptr;
  prometheus::Family<prometheus::Counter>* violations_ = nullptr;
  prometheus::Family<prometheus::Counter>* proxy_connections_ = nullptr;
  prometheus::Counter* proxy_refusals_ = nullptr;
  prometheus::Gauge* launcher_up_ = nullptr;
  prometheus::Counter* launcher_reconnects_ = nullptr;
};

// The sessions gauge's samples: one per state and backend a session can have, zero included.
prometheus::MetricFamily SessionsFamily(const std::vector<v1::SandboxHandle>& sessions);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_BROKER_METRICS_H_
