#include "launcher/launcher_metrics.h"

#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"

namespace ccsandbox::launcher {
namespace {

TEST(LauncherMetricsTest, CountsTrappedCallsByOutcomeAndTheirLatency) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start("127.0.0.1:0", "launcher");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  LauncherMetrics metrics(endpoint->get());
  metrics.CreateGuardCall(CallOutcome::kPerformed, absl::Microseconds(30));
  metrics.CreateGuardCall(CallOutcome::kRefused, absl::Microseconds(80));
  metrics.CreateGuardCall(CallOutcome::kPerformed, absl::Milliseconds(2));
  const std::string text =
      prometheus::TextSerializer().Serialize((*endpoint)->registry().Collect());
  for (const char* line : {
           R"(ccsandbox_launcher_create_guard_calls_total{outcome="performed"} 2)",
           R"(ccsandbox_launcher_create_guard_calls_total{outcome="refused"} 1)",
           R"(ccsandbox_launcher_create_guard_calls_total{outcome="continued"} 0)",
           R"(ccsandbox_launcher_create_guard_call_duration_seconds_count 3)",
           R"(ccsandbox_launcher_create_guard_call_duration_seconds_bucket{le="5e-05"} 1)",
           R"(ccsandbox_launcher_create_guard_call_duration_seconds_bucket{le="0.0001"} 2)",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

TEST(LauncherMetricsTest, OffCountsNothing) {
  const LauncherMetrics off;
  off.CreateGuardCall(CallOutcome::kRefused, absl::Seconds(1));  // no registry: nothing happens
}

}  // namespace
}  // namespace ccsandbox::launcher
