// Both daemons' metrics as an operator collects them: Debian's real Prometheus server scrapes
// their --metrics-listen endpoints on the loopback every second while sandboxed commands run
// through the broker, and its HTTP API (/api/v1/query) must show the counters moved, a launcher
// outage and the launcher's return.
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <fstream>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "tests/daemon_fixture.h"
#include "tests/poll_until.h"

namespace ccsandbox::testing {
namespace {

// The port a daemon logged ("metrics at http://127.0.0.1:PORT/metrics"); 0 until it has.
uint16_t LoggedMetricsPort(const std::string& log) {
  const std::string kLine = "metrics at http://127.0.0.1:";
  const size_t at = log.find(kLine);
  if (at == std::string::npos) return 0;
  const size_t start = at + kLine.size();
  const size_t end = log.find("/metrics", start);
  uint32_t port = 0;
  if (end == std::string::npos || !absl::SimpleAtoi(log.substr(start, end - start), &port)) {
    return 0;
  }
  return static_cast<uint16_t>(port);
}

// A loopback port free right now (the kernel's pick, released for the server to bind).
uint16_t FreeLoopbackPort() {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (!fd.valid() || bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return 0;
  }
  return ntohs(addr.sin_port);
}

// Debian's prometheus on a loopback port with a private TSDB, scraping two targets every
// second; stopped (and its directory removed) when destroyed.
class PrometheusServer {
 public:
  static absl::StatusOr<std::unique_ptr<PrometheusServer>> Start(uint16_t launcher_port,
                                                                 uint16_t broker_port) {
    std::unique_ptr<PrometheusServer> server(new PrometheusServer());
    char dir[] = "/tmp/ccsandbox-prometheus-XXXXXX";
    if (mkdtemp(dir) == nullptr) return absl::InternalError("mkdtemp failed");
    server->dir_ = dir;
    std::ofstream(server->dir_ + "/prometheus.yml")
        << "global:\n"
        << "  scrape_interval: 1s\n"
        << "  scrape_timeout: 1s\n"
        << "scrape_configs:\n"
        << "  - job_name: ccsandbox-launcher\n"
        << "    static_configs: [{targets: ['127.0.0.1:" << launcher_port << "']}]\n"
        << "  - job_name: ccsandbox-broker\n"
        << "    static_configs: [{targets: ['127.0.0.1:" << broker_port << "']}]\n";
    server->port_ = FreeLoopbackPort();
    if (server->port_ == 0) return absl::InternalError("no free loopback port");
    server->pid_ =
        SpawnDaemon({"/usr/bin/prometheus", "--config.file=" + server->dir_ + "/prometheus.yml",
                     "--storage.tsdb.path=" + server->dir_ + "/data",
                     absl::StrCat("--web.listen-address=127.0.0.1:", server->port_)},
                    {}, server->dir_ + "/prometheus.log");
    if (server->pid_ <= 0) {
      return absl::FailedPreconditionError(
          "cannot start /usr/bin/prometheus; install: apt-get install prometheus");
    }
    return server;
  }

  ~PrometheusServer() {
    if (pid_ > 0) StopDaemon(pid_);
    if (!dir_.empty()) RunProgram({"rm", "-rf", dir_});
  }

  std::string Url(const std::string& path) const {
    return absl::StrCat("http://127.0.0.1:", port_, path);
  }
  bool Ready() const { return RunProgram({"curl", "-sf", Url("/-/ready")}).exit_code == 0; }
  // The API's JSON answer to the instant query `promql`.
  std::string Query(const std::string& promql) const {
    return RunProgram({"curl", "-sS", "--max-time", "5", "-G", "--data-urlencode",
                       "query=" + promql, Url("/api/v1/query")})
        .out;
  }
  // True when `promql` (a comparison, e.g. `x >= 2`) selects at least one series now.
  bool Holds(const std::string& promql) const {
    const std::string answer = Query(promql);
    return absl::StrContains(answer, R"("status":"success")") &&
           absl::StrContains(answer, R"("result":[{)");
  }
  std::string Log() const { return ReadFile(dir_ + "/prometheus.log"); }

 private:
  PrometheusServer() = default;
  std::string dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

TEST(MetricsTest, PrometheusScrapesBothDaemonsAndSeesTheRunsCounted) {
  absl::StatusOr<std::unique_ptr<Daemons>> started =
      Daemons::Start({.broker_flags = {"--metrics-listen=127.0.0.1:0"},
                      .launcher_flags = {"--metrics-listen=127.0.0.1:0"}});
  ASSERT_TRUE(started.ok()) << started.status();
  Daemons& d = **started;
  // Port 0: each daemon logs the port it was given.
  ASSERT_TRUE(PollUntil([&] { return LoggedMetricsPort(d.LauncherLog()) != 0; }, absl::Seconds(10),
                        "the launcher to log its metrics port"))
      << d.LauncherLog();
  ASSERT_TRUE(PollUntil([&] { return LoggedMetricsPort(d.BrokerLog()) != 0; }, absl::Seconds(10),
                        "the broker to log its metrics port"))
      << d.BrokerLog();
  absl::StatusOr<std::unique_ptr<PrometheusServer>> prometheus =
      PrometheusServer::Start(LoggedMetricsPort(d.LauncherLog()), LoggedMetricsPort(d.BrokerLog()));
  ASSERT_TRUE(prometheus.ok()) << prometheus.status();
  const PrometheusServer& server = **prometheus;
  ASSERT_TRUE(PollUntil([&] { return server.Ready(); }, absl::Seconds(60), "prometheus ready"))
      << server.Log();

  // A session that stays while Prometheus looks, and runs that end every way.
  const std::string work = d.MakeWorkdir();
  ProgramResult session = d.Sandboxctl({"session", "start"}, work);
  ASSERT_EQ(session.exit_code, 0) << session.err << d.BrokerLog();
  const std::string id(absl::StripSuffix(session.out, "\n"));
  EXPECT_EQ(d.Sandboxctl({"run", "--session=" + id, "--", "true"}, work).exit_code, 0);
  EXPECT_EQ(d.Sandboxctl({"run", "--", "true"}, work).exit_code, 0);
  EXPECT_EQ(d.Sandboxctl({"run", "--", "sh", "-c", "exit 3"}, work).exit_code, 3);
  ProgramResult timed_out = d.Sandboxctl({"run", "--timeout=1", "--", "sleep", "30"}, work);
  EXPECT_NE(timed_out.exit_code, 0) << timed_out.out;
  // The create guard performs one creation and refuses the other (a violation).
  ProgramResult guarded =
      d.Sandboxctl({"run", "--json", "--", "sh", "-c", "touch ok.txt; touch .env; true"}, work);
  EXPECT_TRUE(absl::StrContains(guarded.out, R"("action":"file-write-create")")) << guarded.out;
  // Both egress proxies, each refusing a host no allowlist names.
  ProgramResult egress =
      d.Sandboxctl({"run", "--json", "--", "sh", "-c",
                    "curl -sS -o /dev/null --max-time 20 http://refused.test:9/x;"
                    "curl -sS -o /dev/null --max-time 20 --socks5-hostname 127.0.0.1:1080 "
                    "http://refused.test:9/y; true"},
                   work);
  EXPECT_EQ(CountOf(egress.out, R"("action":"network-outbound")"), 2) << egress.out;

  for (const std::string promql : {
           R"(up{job="ccsandbox-launcher"} == 1)",
           R"(up{job="ccsandbox-broker"} == 1)",
           R"(ccsandbox_build_info{daemon="launcher"} == 1)",
           R"(ccsandbox_broker_launcher_up == 1)",
           R"(ccsandbox_broker_sessions{state="warm",backend="native"} >= 1)",
           R"(ccsandbox_broker_execs_total{outcome="exit"} >= 4)",
           R"(ccsandbox_broker_execs_total{outcome="killed"} >= 1)",
           R"(ccsandbox_broker_exec_duration_seconds_count >= 5)",
           R"(ccsandbox_broker_violations_total{action="file-write-create"} >= 1)",
           R"(ccsandbox_launcher_create_guard_calls_total{outcome="refused"} >= 1)",
           R"(ccsandbox_launcher_create_guard_calls_total{outcome="performed"} >= 1)",
           R"(ccsandbox_launcher_create_guard_call_duration_seconds_count >= 2)",
           R"(ccsandbox_broker_proxy_connections_total{proxy="http"} >= 1)",
           R"(ccsandbox_broker_proxy_connections_total{proxy="socks5"} >= 1)",
           R"(ccsandbox_broker_proxy_refusals_total >= 2)",
           R"(ccsandbox_broker_violations_total{action="network-outbound"} >= 2)",
       }) {
    EXPECT_TRUE(PollUntil([&] { return server.Holds(promql); }, absl::Seconds(30), promql))
        << server.Query(promql) << "\n"
        << server.Log();
  }
  // Counted from the table at each scrape: the session's end shows too.
  EXPECT_EQ(d.Sandboxctl({"session", "stop", id}, work).exit_code, 0);
  const std::string none = R"(sum(ccsandbox_broker_sessions) == 0)";
  EXPECT_TRUE(PollUntil([&] { return server.Holds(none); }, absl::Seconds(30), none))
      << server.Query("ccsandbox_broker_sessions");

  // A launcher outage: seen by the broker (and Prometheus's own `up`), then its return counted.
  ASSERT_EQ(d.StopLauncher(), 0);
  for (const std::string promql :
       {R"(ccsandbox_broker_launcher_up == 0)", R"(up{job="ccsandbox-launcher"} == 0)"}) {
    EXPECT_TRUE(PollUntil([&] { return server.Holds(promql); }, absl::Seconds(30), promql))
        << server.Query(promql);
  }
  ASSERT_TRUE(d.RestartLauncher().ok());
  for (const std::string promql : {R"(ccsandbox_broker_launcher_up == 1)",
                                   R"(ccsandbox_broker_launcher_reconnects_total >= 1)"}) {
    EXPECT_TRUE(PollUntil([&] { return server.Holds(promql); }, absl::Seconds(30), promql))
        << server.Query(promql) << d.BrokerLog();
  }
}

TEST(MetricsTest, ANonLoopbackAddressStopsEitherDaemonFromStarting) {
  char dir[] = "/tmp/ccsandbox-metrics-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string sock = std::string(dir) + "/x.sock";
  for (const std::vector<std::string>& argv : {
           std::vector<std::string>{Runfile("broker/sandbox_brokerd"), "--listen=unix:" + sock,
                                    "--launcher=unix:" + sock, "--metrics-listen=0.0.0.0:0"},
           std::vector<std::string>{Runfile("launcher/sandbox_launcherd"), "--socket=" + sock,
                                    "--allowed-uids=0", "--metrics-listen=0.0.0.0:0"},
       }) {
    ProgramResult r = RunProgram(argv);
    EXPECT_EQ(r.exit_code, 2) << argv[0] << ": " << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "--metrics-listen=0.0.0.0:0: not a loopback address"))
        << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, "--allow-remote-metrics")) << r.err;
  }
  RunProgram({"rm", "-rf", dir});
}

}  // namespace
}  // namespace ccsandbox::testing
