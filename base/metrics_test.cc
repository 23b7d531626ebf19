#include "base/metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "prometheus/counter.h"
#include "prometheus/histogram.h"

namespace ccsandbox {
namespace {

// The body of GET http://127.0.0.1:PORT/metrics, as a scraper sees it; "" when it fails.
std::string Scrape(uint16_t port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (!fd.valid() || connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return "";
  }
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (write(fd.get(), request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    return "";
  }
  std::string response;
  char buf[4096];
  for (ssize_t n; (n = read(fd.get(), buf, sizeof(buf))) > 0;) response.append(buf, n);
  if (!absl::StartsWith(response, "HTTP/1.1 200") && !absl::StartsWith(response, "HTTP/1.0 200")) {
    ADD_FAILURE() << "scrape answered: " << response.substr(0, 200);
    return "";
  }
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

// The value of the sample `series` (its name and labels exactly as exposed) in the text format.
std::optional<double> Sample(const std::string& text, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, series + " ")) continue;
    double value = 0;
    if (absl::SimpleAtod(line.substr(series.size() + 1), &value)) return value;
  }
  return std::nullopt;
}

TEST(CheckMetricsListenTest, LoopbackAddressesAreAccepted) {
  for (const char* address : {"127.0.0.1:9464", "127.1.2.3:0", "[::1]:9464", "127.0.0.1:65535"}) {
    absl::StatusOr<std::string> checked = CheckMetricsListen(address, false);
    ASSERT_TRUE(checked.ok()) << address << ": " << checked.status();
    EXPECT_EQ(*checked, address);
  }
}

TEST(CheckMetricsListenTest, OtherAddressesNeedTheOptIn) {
  for (const char* address :
       {"0.0.0.0:9464", "192.168.1.2:80", "[::]:9464", "[::ffff:127.0.0.1]:1", "10.0.0.1:9464"}) {
    absl::StatusOr<std::string> refused = CheckMetricsListen(address, false);
    ASSERT_FALSE(refused.ok()) << address;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(refused.status().message(), "not a loopback address"))
        << refused.status();
    EXPECT_TRUE(absl::StrContains(refused.status().message(), "--allow-remote-metrics"));
    EXPECT_TRUE(CheckMetricsListen(address, true).ok()) << address;
  }
}

TEST(CheckMetricsListenTest, WhatIsNoIpAndPortIsRefusedEvenWithTheOptIn) {
  // A bare port is every interface to civetweb; a suffix or a list is more than one address.
  for (const char* address :
       {"", "9464", ":9464", "localhost:9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:9464s",
        "127.0.0.1:9464r", "127.0.0.1:70000", "127.0.0.1:1,127.0.0.1:2", "::1:9464", "[::1]9464",
        "[::1]", "127.0.0.1:-1", "127.0.0.1:+80"}) {
    for (bool allow_remote : {false, true}) {
      absl::StatusOr<std::string> refused = CheckMetricsListen(address, allow_remote);
      ASSERT_FALSE(refused.ok()) << "'" << address << "'";
      EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_TRUE(absl::StrContains(refused.status().message(), "IP:PORT")) << refused.status();
    }
  }
}

TEST(MetricsEndpointTest, ServesTheRegistryOverHttp) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start("127.0.0.1:0", "test");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  MetricsEndpoint& metrics = **endpoint;
  ASSERT_NE(metrics.port(), 0);
  EXPECT_EQ(metrics.url(), absl::StrCat("http://127.0.0.1:", metrics.port(), "/metrics"));
  auto& runs = prometheus::BuildCounter()
                   .Name("ccsandbox_test_runs_total")
                   .Help("runs")
                   .Register(metrics.registry());
  runs.Add({{"outcome", "exit"}}).Increment(3);
  runs.Add({{"outcome", "killed"}}).Increment();
  prometheus::Histogram& latency = prometheus::BuildHistogram()
                                       .Name("ccsandbox_test_seconds")
                                       .Help("latency")
                                       .Register(metrics.registry())
                                       .Add({}, prometheus::Histogram::BucketBoundaries{0.1, 1});
  latency.Observe(0.05);
  latency.Observe(0.5);

  const std::string text = Scrape(metrics.port());
  EXPECT_EQ(Sample(text, R"(ccsandbox_test_runs_total{outcome="exit"})"), 3) << text;
  EXPECT_EQ(Sample(text, R"(ccsandbox_test_runs_total{outcome="killed"})"), 1) << text;
  EXPECT_EQ(Sample(text, R"(ccsandbox_test_seconds_bucket{le="0.1"})"), 1) << text;
  EXPECT_EQ(Sample(text, R"(ccsandbox_test_seconds_bucket{le="+Inf"})"), 2) << text;
  EXPECT_EQ(Sample(text, "ccsandbox_test_seconds_count"), 2) << text;
  EXPECT_TRUE(absl::StrContains(text, "# TYPE ccsandbox_test_runs_total counter")) << text;
  EXPECT_TRUE(absl::StrContains(text, R"(ccsandbox_build_info{)")) << text;
  EXPECT_TRUE(absl::StrContains(text, R"(daemon="test")")) << text;

  runs.Add({{"outcome", "exit"}}).Increment();
  EXPECT_EQ(Sample(Scrape(metrics.port()), R"(ccsandbox_test_runs_total{outcome="exit"})"), 4);
}

TEST(MetricsEndpointTest, ScrapedMetricsAreComputedPerScrapeWhileTheyLive) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start("127.0.0.1:0", "test");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  int scrapes = 0;
  {
    ScrapedMetrics sessions(endpoint->get(), [&scrapes] {
      prometheus::MetricFamily family;
      family.name = "ccsandbox_test_sessions";
      family.help = "sessions";
      family.type = prometheus::MetricType::Gauge;
      prometheus::ClientMetric sample;
      sample.label.push_back({"state", "warm"});
      sample.gauge.value = ++scrapes;
      family.metric.push_back(sample);
      return std::vector<prometheus::MetricFamily>{family};
    });
    EXPECT_EQ(Sample(Scrape((*endpoint)->port()), R"(ccsandbox_test_sessions{state="warm"})"), 1);
    EXPECT_EQ(Sample(Scrape((*endpoint)->port()), R"(ccsandbox_test_sessions{state="warm"})"), 2);
  }
  const std::string text = Scrape((*endpoint)->port());
  EXPECT_FALSE(absl::StrContains(text, "ccsandbox_test_sessions")) << text;
  EXPECT_TRUE(absl::StrContains(text, "ccsandbox_build_info")) << text;
  EXPECT_EQ(scrapes, 2);
}

TEST(MetricsEndpointTest, ScrapedMetricsWithoutAnEndpointDoNothing) {
  bool called = false;
  ScrapedMetrics off(nullptr, [&called] {
    called = true;
    return std::vector<prometheus::MetricFamily>{};
  });
  EXPECT_FALSE(called);
}

TEST(MetricsEndpointTest, ATakenPortIsUnavailableNotACrash) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> first =
      MetricsEndpoint::Start("127.0.0.1:0", "test");
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string taken = absl::StrCat("127.0.0.1:", (*first)->port());
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> second = MetricsEndpoint::Start(taken, "test");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(second.status().message(), taken)) << second.status();
}

TEST(MetricsEndpointTest, StopsServingWhenDestroyed) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start("127.0.0.1:0", "test");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  const uint16_t port = (*endpoint)->port();
  ASSERT_FALSE(Scrape(port).empty());
  endpoint->reset();
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_NE(connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
}

}  // namespace
}  // namespace ccsandbox
