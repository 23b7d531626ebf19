#include "broker/broker_metrics.h"

#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"

namespace ccsandbox::broker {
namespace {

const char* OutcomeName(BrokerMetrics::ExecOutcome outcome) {
  switch (outcome) {
    case BrokerMetrics::ExecOutcome::kExit:
      return "exit";
    case BrokerMetrics::ExecOutcome::kKilled:
      return "killed";
    case BrokerMetrics::ExecOutcome::kError:
      return "error";
    case BrokerMetrics::ExecOutcome::kCancelled:
      return "cancelled";
  }
  return "error";
}

// "SANDBOX_STATE_WARM" -> "warm".
std::string LabelOf(const std::string& enum_name, absl::string_view prefix) {
  return absl::AsciiStrToLower(absl::StripPrefix(enum_name, prefix));
}

}  // namespace

BrokerMetrics::BrokerMetrics(MetricsEndpoint* endpoint) : endpoint_(endpoint) {
  if (endpoint == nullptr) return;
  prometheus::Registry& registry = endpoint->registry();
  execs_ = &prometheus::BuildCounter()
                .Name("ccsandbox_broker_execs_total")
                .Help(
                    "Exec calls ended, by outcome: exit, killed (the run's last event), error "
                    "(refused or failed before either), cancelled (the client left first)")
                .Register(registry);
  for (auto outcome :
       {ExecOutcome::kExit, ExecOutcome::kKilled, ExecOutcome::kError, ExecOutcome::kCancelled}) {
    execs_->Add({{"outcome", OutcomeName(outcome)}});
  }
  exec_seconds_ =
      &prometheus::BuildHistogram()
           .Name("ccsandbox_broker_exec_duration_seconds")
           .Help("Exec calls from request to end, in seconds")
           .Register(registry)
           .Add({}, prometheus::Histogram::BucketBoundaries{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                            2.5, 5, 10, 30, 60, 300, 1800});
  violations_ = &prometheus::BuildCounter()
                     .Name("ccsandbox_broker_violations_total")
                     .Help(
                         "Violation events (runs' and the sessions' egress and push refusals), "
                         "by action")
                     .Register(registry);
  proxy_connections_ = &prometheus::BuildCounter()
                            .Name("ccsandbox_broker_proxy_connections_total")
                            .Help("Client connections accepted by the sessions' egress proxies")
                            .Register(registry);
  for (const char* proxy : {"http", "socks5"}) proxy_connections_->Add({{"proxy", proxy}});
  proxy_refusals_ = &prometheus::BuildCounter()
                         .Name("ccsandbox_broker_proxy_refusals_total")
                         .Help("Connections the egress proxies refused (allowlist or cap)")
                         .Register(registry)
                         .Add({});
  launcher_up_ = &prometheus::BuildGauge()
                      .Name("ccsandbox_broker_launcher_up")
                      .Help("1 while the launcher answers (checked every second), else 0")
                      .Register(registry)
                      .Add({});
  launcher_reconnects_ = &prometheus::BuildCounter()
                              .Name("ccsandbox_broker_launcher_reconnects_total")
                              .Help("Times the launcher answered again after it did not")
                              .Register(registry)
                              .Add({});
}

void BrokerMetrics::ExecEnded(ExecOutcome outcome, absl::Duration took) const {
  if (execs_ == nullptr) return;
  execs_->Add({{"outcome", OutcomeName(outcome)}}).Increment();
  exec_seconds_->Observe(absl::ToDoubleSeconds(took));
}

void BrokerMetrics::Violation(const std::string& action) const {
  if (violations_ != nullptr) violations_->Add({{"action", action}}).Increment();
}

void BrokerMetrics::ProxyConnection(absl::string_view proxy) const {
  if (proxy_connections_ != nullptr)
    proxy_connections_->Add({{"proxy", std::string(proxy)}}).Increment();
}

void BrokerMetrics::ProxyRefusal() const {
  if (proxy_refusals_ != nullptr) proxy_refusals_->Increment();
}

void BrokerMetrics::LauncherReachable(bool up, bool back) const {
  if (launcher_up_ == nullptr) return;
  launcher_up_->Set(up ? 1 : 0);
  if (back) launcher_reconnects_->Increment();
}

std::unique_ptr<ScrapedMetrics> BrokerMetrics::ServeSessions(
    std::function<std::vector<v1::SandboxHandle>()> list) const {
  if (endpoint_ == nullptr) return nullptr;
  return std::make_unique<ScrapedMetrics>(endpoint_, [list = std::move(list)] {
    return std::vector<prometheus::MetricFamily>{SessionsFamily(list())};
  });
}

prometheus::MetricFamily SessionsFamily(const std::vector<v1::SandboxHandle>& sessions) {
  std::map<std::pair<int, int>, int> counts;
  const auto* states = v1::SandboxState_descriptor();
  const auto* backends = v1::SandboxBackend_descriptor();
  for (int s = 0; s < states->value_count(); ++s) {
    const int state = states->value(s)->number();
    // Never in the table: a destroyed session is gone, an unspecified state is no state.
    if (state == v1::SANDBOX_STATE_UNSPECIFIED || state == v1::SANDBOX_STATE_DESTROYED) continue;
    for (int b = 0; b < backends->value_count(); ++b) {
      const int backend = backends->value(b)->number();
      if (backend != v1::SANDBOX_BACKEND_UNSPECIFIED) counts[{state, backend}] = 0;
    }
  }
  for (const v1::SandboxHandle& handle : sessions) ++counts[{handle.state(), handle.backend()}];
  prometheus::MetricFamily family;
  family.name = "ccsandbox_broker_sessions";
  family.help = "Sessions now, by state and actual backend";
  family.type = prometheus::MetricType::Gauge;
  for (const auto& [key, count] : counts) {
    const auto* state = states->FindValueByNumber(key.first);
    const auto* backend = backends->FindValueByNumber(key.second);
    prometheus::ClientMetric sample;
    sample.label.push_back(
        {"backend", backend ? LabelOf(backend->name(), "SANDBOX_BACKEND_") : "unknown"});
    sample.label.push_back({"state", state ? LabelOf(state->name(), "SANDBOX_STATE_") : "unknown"});
    sample.gauge.value = count;
    family.metric.push_back(std::move(sample));
  }
  return family;
}

}  // namespace ccsandbox::broker
