// A daemon's opt-in Prometheus endpoint (prometheus-cpp): a registry its components add metric
// families to, served as text at http://ADDRESS/metrics together with ccsandbox_build_info.
// Off unless the operator asks (--metrics-listen); components then get no registry and count
// nothing (each daemon's metrics class is a null object without one).
//
//   absl::StatusOr<std::string> address = CheckMetricsListen("127.0.0.1:9464", false);
//   absl::StatusOr<std::unique_ptr<MetricsEndpoint>> metrics =
//       MetricsEndpoint::Start(*address, "broker");
//   prometheus::Counter& runs = prometheus::BuildCounter().Name("ccsandbox_x_total").Help("...")
//                                   .Register((*metrics)->registry()).Add({});
//   ScrapedMetrics sessions(metrics->get(), [&] { return SessionFamilies(); });  // per scrape
//
// Serving: civetweb's own threads; each scrape reads the registry (lock-free counters) and
// calls every ScrapedMetrics' function. Nothing is served once the endpoint is destroyed.
#ifndef CCSANDBOX_BASE_METRICS_H_
#define CCSANDBOX_BASE_METRICS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"

namespace prometheus {
class Exposer;
}  // namespace prometheus

namespace ccsandbox {

// Checks a metrics listen address, IP:PORT or [IPv6]:PORT (port 0: any free one), and returns
// it as the exposer takes it. A host name, a bare port (every interface) or a non-loopback
// address is INVALID_ARGUMENT unless `allow_remote`, saying how to opt in.
absl::StatusOr<std::string> CheckMetricsListen(const std::string& address, bool allow_remote);

class MetricsEndpoint {
 public:
  // Serves the registry at http://`address`/metrics (address checked by CheckMetricsListen);
  // `daemon` labels ccsandbox_build_info. UNAVAILABLE when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const std::string& address,
                                                                const std::string& daemon);
  ~MetricsEndpoint();  // stops serving; no scrape is in flight once it returns
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // Outlives every family and metric registered in it (until this endpoint is destroyed).
  prometheus::Registry& registry() { return *registry_; }
  // The bound port (the kernel's choice for port 0).
  uint16_t port() const { return port_; }
  // "http://ADDRESS:PORT/metrics", for logs.
  const std::string& url() const { return url_; }

 private:
  friend class ScrapedMetrics;
  MetricsEndpoint() = default;

  std::shared_ptr<prometheus::Registry> registry_;
  std::string host_;  // the IP address served, without brackets
  uint16_t port_ = 0;
  std::string url_;
  std::unique_ptr<prometheus::Exposer> exposer_;  // last: stops serving first
};

// Metric families computed when scraped (e.g. a gauge read from a table at that moment), served
// while this object lives. With a null endpoint (metrics off) it does nothing. `collect` runs on
// the endpoint's threads; none of its calls is in flight or made once the destructor returns, so
// it may use whatever outlives this object.
class ScrapedMetrics {
 public:
  using CollectFn = std::function<std::vector<prometheus::MetricFamily>()>;
  ScrapedMetrics(MetricsEndpoint* endpoint, CollectFn collect);
  ~ScrapedMetrics();
  ScrapedMetrics(const ScrapedMetrics&) = delete;
  ScrapedMetrics& operator=(const ScrapedMetrics&) = delete;

 private:
  class Source;
  std::shared_ptr<Source> source_;  // null when metrics are off
};

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_METRICS_H_
