// Enforcement never depends on the client (DESIGN.md "Threat model"): with the real daemons, an
// Exec client that stops reading (tests/python/exec_client.py, a separate process that reads
// only when told to) does not keep a timeout, Kill or Destroy from ending its command, does not
// make either daemon buffer without bound, still gets the rest of its stream when it reads
// again, and does not hold up other sessions' events.
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "proxy/proxy_test_support.h"
#include "tests/client_fixture.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {
namespace {

using Clock = std::chrono::steady_clock;

// The cases that end runs whatever the client does run with the broker as root and as an
// unprivileged user (whose runs the launcher ends as another uid's). The others pin stall limits
// and stream resumption, which do not depend on the broker's identity: root broker only.
class ClientTestByBroker : public ClientTest, public ::testing::WithParamInterface<bool> {
 protected:
  void StartDaemons() { ClientTest::StartDaemons({.unprivileged_broker = GetParam()}); }
};

constexpr long kMaxGrowthKb = 64 * 1024;

TEST_P(ClientTestByBroker, AStalledClientsTimeoutEndsTheRunAndNeitherDaemonBuffersItsOutput) {
  ClientTest::StartDaemons({.unprivileged_broker = GetParam(), .measures_daemon_memory = true});
  ASSERT_TRUE(Launch("timeout").ok());
  const long broker_before = BrokerKb("VmHWM");
  const long launcher_before = LauncherKb("VmHWM");
  const std::string marker = Marker("timeout");
  auto client = StalledClient("timeout", 3000, {"sh", "-c", Flood(marker)});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30)) << daemons_->LauncherLog();
  const auto appeared = Clock::now();
  EXPECT_TRUE(WaitNoProcessMatches(marker, 20)) << "the timeout did not end the stalled run";
  const double lived = std::chrono::duration<double>(Clock::now() - appeared).count();
  EXPECT_LT(lived, 15) << "timeout 3 s, yet the command ran " << lived << " s";
  // Peak resident memory of both daemons while `yes` wrote as fast as it could for 3 s.
  const long broker_growth = BrokerKb("VmHWM") - broker_before;
  const long launcher_growth = LauncherKb("VmHWM") - launcher_before;
  EXPECT_LT(broker_growth, kMaxGrowthKb) << "broker grew by " << broker_growth << " KiB";
  EXPECT_LT(launcher_growth, kMaxGrowthKb) << "launcher grew by " << launcher_growth << " KiB";
  std::cerr << "stalled timeout: command lived " << lived << " s; peak RSS growth broker "
            << broker_growth << " KiB, launcher " << launcher_growth << " KiB\n";
  client->Tell("cancel");
}

TEST_P(ClientTestByBroker, KillEndsTheRunOfAStalledClient) {
  StartDaemons();
  ASSERT_TRUE(Launch("kill").ok());
  const std::string marker = Marker("kill");
  auto client = StalledClient("kill", 0, {"sh", "-c", Flood(marker)});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::KillRequest request;
  request.set_session_id("kill");
  request.set_reason("operator stop");
  v1::KillResponse response;
  const auto asked = Clock::now();
  ASSERT_TRUE(stub_->Kill(&ctx, request, &response).ok());
  EXPECT_EQ(response.runs_signalled(), 1);
  EXPECT_TRUE(WaitNoProcessMatches(marker, 10)) << "Kill did not end the stalled run";
  std::cerr << "stalled Kill: gone after "
            << std::chrono::duration<double>(Clock::now() - asked).count() << " s\n";
  client->Tell("cancel");
}

TEST_P(ClientTestByBroker, DestroyEndsTheRunOfAStalledClientAndTheSession) {
  StartDaemons();
  ASSERT_TRUE(Launch("destroy").ok());
  const std::string marker = Marker("destroy");
  auto client = StalledClient("destroy", 0, {"sh", "-c", Flood(marker)});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  v1::SessionRequest request;
  request.set_session_id("destroy");
  v1::SandboxHandle handle;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    ASSERT_TRUE(stub_->Destroy(&ctx, request, &handle).ok());
  }
  EXPECT_EQ(handle.state(), v1::SANDBOX_STATE_DESTROYED);
  EXPECT_TRUE(WaitNoProcessMatches(marker, 10)) << "the session said DESTROYED; its command ran on";
  grpc::ClientContext ctx;
  EXPECT_EQ(stub_->GetSession(&ctx, request, &handle).error_code(), grpc::StatusCode::NOT_FOUND);
  client->Tell("cancel");
}

TEST_F(ClientTest, AStalledClientThatReadsAgainGetsTheRestAndTheLastEvent) {
  StartDaemons();
  ASSERT_TRUE(Launch("resume").ok());
  const std::string marker = Marker("resume");
  auto client = StalledClient("resume", 2000, {"sh", "-c", Flood(marker)});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  ASSERT_TRUE(WaitNoProcessMatches(marker, 20));
  client->Tell("read");
  const std::string out = client->Finish(60);
  EXPECT_TRUE(absl::StrContains(out, "\"status\": \"OK\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"last\": \"killed\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"killedReason\": \"timeout\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"killedDetail\": \"timeout after 2000 ms\"")) << out;
  EXPECT_FALSE(absl::StrContains(out, "\"stdoutBytes\": 0")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"starting\": 1")) << out;
}

TEST_F(ClientTest, AClientThatTakesNothingForTheStallLimitIsDroppedAndItsRunKilled) {
  DaemonOptions options;
  options.broker_flags = {"--exec-stall-timeout=2s"};
  StartDaemons(options);
  ASSERT_TRUE(Launch("drop").ok());
  const std::string marker = Marker("drop");
  auto client = StalledClient("drop", 0, {"sh", "-c", Flood(marker)});  // no timeout
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  EXPECT_TRUE(WaitNoProcessMatches(marker, 30)) << "a dropped client's run went on";
  EXPECT_TRUE(WaitForText([&] { return daemons_->BrokerLog(); }, "it is dropped and the run", 30))
      << daemons_->BrokerLog();
  client->Tell("read");
  const std::string out = client->Finish(60);
  EXPECT_TRUE(absl::StrContains(out, "\"status\": \"CANCELLED\"")) << out;
  grpc::ClientContext ctx;
  v1::SessionRequest request;
  request.set_session_id("drop");
  v1::SandboxHandle handle;
  ASSERT_TRUE(stub_->GetSession(&ctx, request, &handle).ok());
  EXPECT_EQ(handle.state(), v1::SANDBOX_STATE_WARM);
}

TEST_F(ClientTest, TheLauncherDropsAStreamNobodyReadsOnceItsRunHasEnded) {
  // The broker's own limit set far away: the launcher's bound is what is seen here (it guards
  // against a broker that stops reading).
  DaemonOptions options;
  options.broker_flags = {"--exec-stall-timeout=600s"};
  options.launcher_flags = {"--stream-stall-timeout=2s"};
  StartDaemons(options);
  ASSERT_TRUE(Launch("launcher-drop").ok());
  const std::string marker = Marker("ldrop");
  auto client = StalledClient("launcher-drop", 1000, {"sh", "-c", Flood(marker)});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  ASSERT_TRUE(WaitNoProcessMatches(marker, 20));
  EXPECT_TRUE(WaitForText([&] { return daemons_->LauncherLog(); }, "the broker took no event", 60))
      << daemons_->LauncherLog();
  client->Tell("read");
  const std::string out = client->Finish(60);
  // What was in flight still arrives, and the run ends as killed either way.
  EXPECT_TRUE(absl::StrContains(out, "\"status\": \"OK\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"last\": \"killed\"")) << out;
}

// Seconds between the first log line containing `from` and the next containing `to` (their
// "YYYY-MM-DDTHH:MM:SS.mmm" stamps), or -1.
double SecondsBetween(const std::string& log, const std::string& from, const std::string& to) {
  auto stamp = [&](size_t line_start) {
    const std::string hms = log.substr(line_start + 14, 12);  // "ts=YYYY-MM-DDT" then HH:MM:SS.mmm
    return std::stoi(hms.substr(0, 2)) * 3600.0 + std::stoi(hms.substr(3, 2)) * 60.0 +
           std::stod(hms.substr(6));
  };
  const size_t a = log.find(from);
  if (a == std::string::npos) return -1;
  const size_t b = log.find(to, a);
  if (b == std::string::npos) return -1;
  const size_t a_line = log.rfind('\n', a), b_line = log.rfind('\n', b);
  return stamp(b_line == std::string::npos ? 0 : b_line + 1) -
         stamp(a_line == std::string::npos ? 0 : a_line + 1);
}

TEST_P(ClientTestByBroker, StoppingEitherDaemonEndsAStalledClientsRunPromptly) {
  // Measured from each daemon's own log ("signal 15" to "stopped"): after that, gRPC's own
  // library shutdown can take seconds more at exit, with or without a stalled client.
  StartDaemons();
  ASSERT_TRUE(Launch("stop-launcher").ok());
  const std::string first = Marker("stopl");
  auto a = StalledClient("stop-launcher", 0, {"sh", "-c", Flood(first)});
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(first, 30));
  ASSERT_TRUE(daemons_->RestartLauncher().ok());
  EXPECT_TRUE(WaitNoProcessMatches(first, 10));
  const double launcher_stop = SecondsBetween(daemons_->LauncherLog(), "signal 15: stopping",
                                              "daemon=launcher msg=\"stopped\"");
  EXPECT_GE(launcher_stop, 0) << daemons_->LauncherLog();
  EXPECT_LT(launcher_stop, 4) << daemons_->LauncherLog();

  ASSERT_TRUE(Launch("stop-broker").ok());
  const std::string second = Marker("stopb");
  auto b = StalledClient("stop-broker", 0, {"sh", "-c", Flood(second)});
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(second, 30));
  daemons_->StopBroker();
  EXPECT_TRUE(WaitNoProcessMatches(second, 10));
  const double broker_stop =
      SecondsBetween(daemons_->BrokerLog(), "signal 15: stopping", "daemon=broker msg=\"stopped\"");
  EXPECT_GE(broker_stop, 0) << daemons_->BrokerLog();
  EXPECT_LT(broker_stop, 4) << daemons_->BrokerLog();
  std::cerr << "stalled client: launcher stopped in " << launcher_stop << " s, broker in "
            << broker_stop << " s\n";
}

TEST_F(ClientTest, AStalledClientDoesNotHoldUpOtherSessionsEvents) {
  StartDaemons();
  proxy::testing::HttpOrigin origin;
  const std::string allowed = absl::StrCat("allowed.test:", origin.port());
  ASSERT_TRUE(Launch("stuck", {allowed}).ok());
  ASSERT_TRUE(Launch("other", {allowed}).ok());
  // The stuck session floods its stream and keeps making refused connections (violation events
  // for a stream that is full).
  const std::string marker = Marker("stuck");
  const std::string refusals =
      "import socket\n"
      "while True:\n"
      "    s = socket.create_connection(('127.0.0.1', 3128))\n"
      "    s.sendall(b'CONNECT refused.test:443 HTTP/1.1\\r\\n\\r\\n')\n"
      "    s.recv(4096)\n"
      "    s.close()\n";
  auto client = StalledClient(
      "stuck", 0, {"sh", "-c", absl::StrCat("python3 -c \"", refusals, "\" & ", Flood(marker))});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30));
  ASSERT_TRUE(WaitForText([&] { return daemons_->BrokerLog(); }, "target=refused.test:443", 30));
  grpc::Status status;
  std::vector<v1::SandboxEvent> events =
      Exec("other",
           {"sh", "-c",
            absl::StrCat("curl -sS -o /dev/null -w 'code=%{http_code}\\n' "
                         "--max-time 20 http://elsewhere.test/; curl -sS -o /dev/null "
                         "-w 'code=%{http_code}\\n' --max-time 20 http://",
                         allowed, "/")},
           &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::string out;
  int violations = 0;
  for (const v1::SandboxEvent& e : events) {
    out += e.stdout();
    if (e.has_violation() && e.violation().target() == "elsewhere.test:80") ++violations;
  }
  EXPECT_EQ(out, "code=403\ncode=200\n");
  EXPECT_EQ(violations, 1);
  ASSERT_TRUE(events.back().has_exit());
  grpc::ClientContext ctx;
  v1::SessionRequest request;
  request.set_session_id("stuck");
  v1::SandboxHandle handle;
  ASSERT_TRUE(stub_->Destroy(&ctx, request, &handle).ok());
  EXPECT_TRUE(WaitNoProcessMatches(marker, 10));
  client->Tell("cancel");
}

INSTANTIATE_TEST_SUITE_P(Brokers, ClientTestByBroker, ::testing::Bool(), BrokerIdentityName);

}  // namespace
}  // namespace ccsandbox::testing
