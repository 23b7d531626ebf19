#include "broker/broker_metrics.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"

namespace ccsandbox::broker {
namespace {

// The value of a sample among `families`: the family `name`, the sample whose labels include
// `labels` (a histogram: its count).
std::optional<double> Value(const std::vector<prometheus::MetricFamily>& families,
                            const std::string& name,
                            const std::vector<std::pair<std::string, std::string>>& labels = {}) {
  for (const prometheus::MetricFamily& family : families) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& sample : family.metric) {
      bool match = true;
      for (const auto& [key, value] : labels) {
        bool found = false;
        for (const auto& label : sample.label) found |= label.name == key && label.value == value;
        match &= found;
      }
      if (!match) continue;
      switch (family.type) {
        case prometheus::MetricType::Counter:
          return sample.counter.value;
        case prometheus::MetricType::Gauge:
          return sample.gauge.value;
        case prometheus::MetricType::Histogram:
          return static_cast<double>(sample.histogram.sample_count);
        default:
          return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

class BrokerMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<MetricsEndpoint>> started =
        MetricsEndpoint::Start("127.0.0.1:0", "broker");
    ASSERT_TRUE(started.ok()) << started.status();
    endpoint_ = *std::move(started);
  }
  std::vector<prometheus::MetricFamily> Families() { return endpoint_->registry().Collect(); }

  std::unique_ptr<MetricsEndpoint> endpoint_;
};

TEST_F(BrokerMetricsTest, EveryOutcomeIsExposedFromTheStart) {
  BrokerMetrics metrics(endpoint_.get());
  for (const char* outcome : {"exit", "killed", "error", "cancelled"}) {
    EXPECT_EQ(Value(Families(), "ccsandbox_broker_execs_total", {{"outcome", outcome}}), 0)
        << outcome;
  }
  EXPECT_EQ(Value(Families(), "ccsandbox_broker_proxy_connections_total", {{"proxy", "http"}}), 0);
  EXPECT_EQ(Value(Families(), "ccsandbox_broker_launcher_up"), 0);
}

TEST_F(BrokerMetricsTest, CountsWhatItIsTold) {
  BrokerMetrics metrics(endpoint_.get());
  const BrokerMetrics copy = metrics;  // copies share the counters
  metrics.ExecEnded(BrokerMetrics::ExecOutcome::kExit, absl::Milliseconds(200));
  copy.ExecEnded(BrokerMetrics::ExecOutcome::kExit, absl::Seconds(3));
  metrics.ExecEnded(BrokerMetrics::ExecOutcome::kKilled, absl::Seconds(1));
  metrics.Violation("network-outbound");
  metrics.Violation("network-outbound");
  metrics.Violation("file-write*");
  metrics.ProxyConnection("socks5");
  metrics.ProxyRefusal();
  const auto families = Families();
  EXPECT_EQ(Value(families, "ccsandbox_broker_execs_total", {{"outcome", "exit"}}), 2);
  EXPECT_EQ(Value(families, "ccsandbox_broker_execs_total", {{"outcome", "killed"}}), 1);
  EXPECT_EQ(Value(families, "ccsandbox_broker_execs_total", {{"outcome", "error"}}), 0);
  EXPECT_EQ(Value(families, "ccsandbox_broker_exec_duration_seconds"), 3);
  EXPECT_EQ(Value(families, "ccsandbox_broker_violations_total", {{"action", "network-outbound"}}),
            2);
  EXPECT_EQ(Value(families, "ccsandbox_broker_violations_total", {{"action", "file-write*"}}), 1);
  EXPECT_EQ(Value(families, "ccsandbox_broker_proxy_connections_total", {{"proxy", "socks5"}}), 1);
  EXPECT_EQ(Value(families, "ccsandbox_broker_proxy_refusals_total"), 1);
}

TEST_F(BrokerMetricsTest, TheLauncherIsUpAndReconnectsAreCounted) {
  BrokerMetrics metrics(endpoint_.get());
  metrics.LauncherReachable(true, false);
  EXPECT_EQ(Value(Families(), "ccsandbox_broker_launcher_up"), 1);
  metrics.LauncherReachable(false, false);
  EXPECT_EQ(Value(Families(), "ccsandbox_broker_launcher_up"), 0);
  metrics.LauncherReachable(true, true);
  EXPECT_EQ(Value(Families(), "ccsandbox_broker_launcher_up"), 1);
  EXPECT_EQ(Value(Families(), "ccsandbox_broker_launcher_reconnects_total"), 1);
}

TEST(BrokerMetricsOffTest, CountsNothingAndServesNothing) {
  const BrokerMetrics off;
  off.ExecEnded(BrokerMetrics::ExecOutcome::kError, absl::Seconds(1));
  off.Violation("network-outbound");
  off.ProxyConnection("http");
  off.ProxyRefusal();
  off.LauncherReachable(false, true);
  bool listed = false;
  EXPECT_EQ(off.ServeSessions([&] {
    listed = true;
    return std::vector<v1::SandboxHandle>{};
  }),
            nullptr);
  EXPECT_FALSE(listed);
}

v1::SandboxHandle Session(v1::SandboxState state, v1::SandboxBackend backend) {
  v1::SandboxHandle handle;
  handle.set_state(state);
  handle.set_backend(backend);
  return handle;
}

TEST(SessionsFamilyTest, CountsByStateAndBackendWithZeros) {
  const prometheus::MetricFamily family =
      SessionsFamily({Session(v1::SANDBOX_STATE_WARM, v1::SANDBOX_BACKEND_NATIVE),
                      Session(v1::SANDBOX_STATE_WARM, v1::SANDBOX_BACKEND_NATIVE),
                      Session(v1::SANDBOX_STATE_ACTIVE, v1::SANDBOX_BACKEND_NONE)});
  const std::vector<prometheus::MetricFamily> families{family};
  EXPECT_EQ(family.name, "ccsandbox_broker_sessions");
  EXPECT_EQ(family.type, prometheus::MetricType::Gauge);
  EXPECT_EQ(
      Value(families, "ccsandbox_broker_sessions", {{"state", "warm"}, {"backend", "native"}}), 2);
  EXPECT_EQ(
      Value(families, "ccsandbox_broker_sessions", {{"state", "active"}, {"backend", "none"}}), 1);
  EXPECT_EQ(
      Value(families, "ccsandbox_broker_sessions", {{"state", "error"}, {"backend", "native"}}), 0);
  EXPECT_EQ(
      Value(families, "ccsandbox_broker_sessions", {{"state", "created"}, {"backend", "microvm"}}),
      0);
  // 5 live states (created, warm, active, suspended, error) x 3 backends, and nothing for destroyed
  // or unspecified.
  EXPECT_EQ(family.metric.size(), 5u * 3u);
  EXPECT_FALSE(Value(families, "ccsandbox_broker_sessions", {{"state", "destroyed"}}).has_value());
  EXPECT_FALSE(
      Value(families, "ccsandbox_broker_sessions", {{"backend", "unspecified"}}).has_value());
  // What the exposer would serve parses as text.
  EXPECT_NE(prometheus::TextSerializer().Serialize(families).find(
                R"(ccsandbox_broker_sessions{backend="native",state="warm"} 2)"),
            std::string::npos)
      << prometheus::TextSerializer().Serialize(families);
}

}  // namespace
}  // namespace ccsandbox::broker
