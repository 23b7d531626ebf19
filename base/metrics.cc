#include "base/metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "base/version.h"
#include "prometheus/exposer.h"
#include "prometheus/gauge.h"

namespace ccsandbox {
namespace {

absl::Status BadAddress(const std::string& address, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("--metrics-listen=", address, ": ", why,
                   "; give IP:PORT, e.g. 127.0.0.1:9464 or [::1]:9464"));
}

// Connects to HOST:PORT (an IP address) and hangs up at once.
void Poke(const std::string& host, uint16_t port) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    len = sizeof(*v4);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    len = sizeof(*v6);
  } else {
    return;
  }
  UniqueFd fd(socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.valid()) (void)connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len);
}

}  // namespace

absl::StatusOr<std::string> CheckMetricsListen(const std::string& address, bool allow_remote) {
  std::string host;
  absl::string_view port_text;
  if (!address.empty() && address[0] == '[') {
    const size_t close = address.find(']');
    if (close == std::string::npos || address.size() < close + 2 || address[close + 1] != ':') {
      return BadAddress(address, "an IPv6 address is written [ADDRESS]:PORT");
    }
    host = address.substr(1, close - 1);
    port_text = absl::string_view(address).substr(close + 2);
  } else {
    const size_t colon = address.rfind(':');
    // A bare port would be every interface; civetweb's suffixes (s, r) and lists (,) are not
    // ports either.
    if (colon == std::string::npos || colon == 0) return BadAddress(address, "no IP address");
    host = address.substr(0, colon);
    if (host.find(':') != std::string::npos) {
      return BadAddress(address, "an IPv6 address is written [ADDRESS]:PORT");
    }
    port_text = absl::string_view(address).substr(colon + 1);
  }
  uint32_t port = 0;
  if (port_text.empty() || port_text.size() > 5 ||
      !std::all_of(port_text.begin(), port_text.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(port_text, &port) || port > 65535) {
    return BadAddress(address, "the port is not a number from 0 to 65535");
  }
  in_addr v4{};
  in6_addr v6{};
  bool loopback = false;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    loopback = (ntohl(v4.s_addr) >> 24) == 127;
  } else if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    loopback = IN6_IS_ADDR_LOOPBACK(&v6);
  } else {
    return BadAddress(address, absl::StrCat("'", host, "' is not an IP address"));
  }
  // Metrics tell anyone who can connect what runs here and which hosts were refused, without
  // authentication: off the loopback only when the operator says so.
  if (!loopback && !allow_remote) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--metrics-listen=", address,
        ": not a loopback address; the metrics (sessions, commands, refused hosts) would be "
        "readable by anyone who can reach it, unauthenticated. Use 127.0.0.1:PORT or [::1]:PORT, "
        "or accept that explicitly with --allow-remote-metrics"));
  }
  return address;
}

class ScrapedMetrics::Source : public prometheus::Collectable {
 public:
  explicit Source(CollectFn collect) : collect_(std::move(collect)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    absl::MutexLock lock(&mu_);
    if (!collect_) return {};
    return collect_();
  }

  // Waits for a Collect in flight; none calls `collect_` after it.
  void Detach() {
    absl::MutexLock lock(&mu_);
    collect_ = nullptr;
  }

 private:
  mutable absl::Mutex mu_;
  ScrapedMetrics::CollectFn collect_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(const std::string& address,
                                                                        const std::string& daemon) {
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint());
  endpoint->registry_ = std::make_shared<prometheus::Registry>();
  // prometheus-cpp reports with exceptions (civetweb cannot bind, a bad name): none leaves here.
  try {
    prometheus::BuildGauge()
        .Name("ccsandbox_build_info")
        .Help("1, labelled with the daemon, its version and the commit it was built from")
        .Register(*endpoint->registry_)
        .Add({{"daemon", daemon}, {"version", kVersion}, {"commit", BuildCommit()}})
        .Set(1);
    endpoint->exposer_ = std::make_unique<prometheus::Exposer>(address, /*num_threads=*/2);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("--metrics-listen=", address, ": cannot serve metrics: ", e.what()));
  }
  endpoint->exposer_->RegisterCollectable(endpoint->registry_);
  const std::vector<int> ports = endpoint->exposer_->GetListeningPorts();
  if (ports.empty()) {
    return absl::UnavailableError(
        absl::StrCat("--metrics-listen=", address, ": cannot serve metrics: no port bound"));
  }
  endpoint->port_ = static_cast<uint16_t>(ports.front());
  const std::string host = address.substr(0, address.rfind(':'));
  endpoint->url_ = absl::StrCat("http://", host, ":", endpoint->port_, "/metrics");
  endpoint->host_ = host[0] == '[' ? host.substr(1, host.size() - 2) : host;
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() {
  if (exposer_ == nullptr) return;
  // civetweb's listening thread sees the stop flag only when its poll() returns, every 2 s: a
  // connection made while the exposer stops wakes it, so the daemon stops at once.
  std::atomic<bool> stopped{false};
  std::thread waker([this, &stopped] {
    while (!stopped.load()) {
      Poke(host_, port_);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  exposer_.reset();
  stopped.store(true);
  waker.join();
}

ScrapedMetrics::ScrapedMetrics(MetricsEndpoint* endpoint, CollectFn collect) {
  if (endpoint == nullptr) return;
  source_ = std::make_shared<Source>(std::move(collect));
  endpoint->exposer_->RegisterCollectable(source_);
}

ScrapedMetrics::~ScrapedMetrics() {
  if (source_ != nullptr) source_->Detach();
}

}  // namespace ccsandbox
