// BrokerService against the fake launcher: one-shot sessions are gone after their Exec however it
// ends, and a launcher that goes away mid-run, restarts or is absent ends runs killed or refuses
// them while the session goes on.
#include <signal.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "broker/broker_service_fixture.h"
#include "broker/fake_launcher.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/launcher.grpc.pb.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/poll_until.h"

namespace ccsandbox::broker {
namespace {

using grpc::StatusCode;
using testing::BrokerServiceTest;
using testing::kLostMessage;
using testing::OpenExec;
using testing::Request;

// How a one-shot Exec ends; the session is gone afterwards in every case.
enum class OneShotEnd { kExits, kKilled, kLauncherLost, kClientCancels, kRefused };

struct OneShotCase {
  std::string name;
  OneShotEnd end;
  std::string backend;
};

void PrintTo(const OneShotCase& c, std::ostream* os) { *os << c.name; }

class OneShotTest : public BrokerServiceTest, public ::testing::WithParamInterface<OneShotCase> {};

TEST_P(OneShotTest, TheSessionIsGoneAfterItsExec) {
  const OneShotCase& c = GetParam();
  launcher_->Start();
  StartBroker();
  Launch("once", c.backend);
  EXPECT_EQ(EgressDirs(), c.backend == "none" ? 0 : 1);
  v1::ExecRequest request =
      Request("once", c.end == OneShotEnd::kExits          ? std::vector<std::string>{"exit", "3"}
                      : c.end == OneShotEnd::kLauncherLost ? std::vector<std::string>{"lose"}
                      : c.end == OneShotEnd::kRefused      ? std::vector<std::string>{}
                                                           : std::vector<std::string>{"hold"});
  request.set_destroy_session_after(true);
  OpenExec exec(*stub_, request);
  switch (c.end) {
    case OneShotEnd::kExits:
    case OneShotEnd::kLauncherLost: {
      grpc::Status status = exec.Finish();
      ASSERT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(exec.events().back().has_exit(), c.end == OneShotEnd::kExits);
      EXPECT_EQ(exec.events().back().has_killed(), c.end == OneShotEnd::kLauncherLost);
      break;
    }
    case OneShotEnd::kKilled: {
      ASSERT_TRUE(exec.ReadUntilReady());
      int signalled = 0;
      ASSERT_TRUE(Kill("once", "stop", &signalled).ok());
      EXPECT_EQ(signalled, 1);
      ASSERT_TRUE(exec.Finish().ok());
      EXPECT_TRUE(exec.events().back().has_killed());
      break;
    }
    case OneShotEnd::kClientCancels:
      ASSERT_TRUE(exec.ReadUntilReady());
      exec.Cancel();
      EXPECT_EQ(exec.Finish().error_code(), StatusCode::CANCELLED);
      break;
    case OneShotEnd::kRefused: {
      grpc::Status status = exec.Finish();
      EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT) << status.error_message();
      EXPECT_TRUE(fake().plans().empty());
      break;
    }
  }
  StopBroker();  // waits for the Exec handler, which destroys the session after its client went
  EXPECT_EQ(DirectGetSession("once").error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(EgressDirs(), 0) << "the one-shot session's proxies outlived it";
  if (c.end == OneShotEnd::kClientCancels) {
    // The client's going reached the launcher as a cancelled call, which kills the run there.
    ASSERT_EQ(fake().plans().size(), 1u);
    EXPECT_EQ(fake().AwaitOutcome(fake().plans()[0].run_id()), "cancelled");
    for (const v1::SignalRequest& signal : fake().signals()) {
      EXPECT_NE(signal.run_id(), fake().plans()[0].run_id()) << "the run was signalled";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ends, OneShotTest,
    ::testing::Values(OneShotCase{"Exits", OneShotEnd::kExits, ""},
                      OneShotCase{"ExitsOnNone", OneShotEnd::kExits, "none"},
                      OneShotCase{"Killed", OneShotEnd::kKilled, ""},
                      OneShotCase{"LauncherLost", OneShotEnd::kLauncherLost, ""},
                      OneShotCase{"ClientCancels", OneShotEnd::kClientCancels, ""},
                      OneShotCase{"ClientCancelsOnNone", OneShotEnd::kClientCancels, "none"},
                      OneShotCase{"RefusedBeforeItRan", OneShotEnd::kRefused, ""}),
    [](const ::testing::TestParamInfo<OneShotCase>& info) { return info.param.name; });

TEST_F(BrokerServiceTest, ALauncherLostMidRunEndsTheRunKilledAndTheSessionGoesOn) {
  launcher_->Start();
  StartBroker();
  Launch("lost");
  Stream lost = Exec(Request("lost", {"lose"}));
  ASSERT_TRUE(lost.status.ok()) << lost.status.error_message();
  ASSERT_EQ(lost.events.size(), 3u);
  EXPECT_TRUE(lost.events[0].has_starting());
  EXPECT_TRUE(lost.events[1].has_ready());
  ASSERT_TRUE(lost.events[2].has_killed());
  EXPECT_EQ(lost.events[2].killed().reason(), "launcher-restart");
  EXPECT_EQ(lost.events[2].killed().detail(),
            absl::StrCat("launcher connection lost: ", kLostMessage));
  EXPECT_EQ(lost.events[2].killed().signal(), SIGKILL);
  EXPECT_EQ(StateOf("lost"), v1::SANDBOX_STATE_WARM);
  Stream again = Exec(Request("lost", {"exit"}));
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_EQ(again.events.back().exit().exit_code(), 0);
}

TEST_F(BrokerServiceTest, ARestartedLauncherEndsItsRunsKilledAndIsReconnected) {
  launcher_->Start();
  StartBroker();
  Launch("restart");
  OpenExec held(*stub_, Request("restart", {"hold"}));
  ASSERT_TRUE(held.ReadUntilReady());
  launcher_->Stop();
  launcher_->Start();
  grpc::Status status = held.Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(held.events().size(), 3u);
  ASSERT_TRUE(held.events().back().has_killed());
  EXPECT_EQ(held.events().back().killed().reason(), "launcher-restart");
  EXPECT_TRUE(absl::StartsWith(held.events().back().killed().detail(), "launcher connection lost"))
      << held.events().back().killed().detail();
  EXPECT_EQ(held.events().back().killed().signal(), SIGKILL);
  // The session's sandbox went with the old launcher: the session is in error, never
  // relaunched behind the client's back.
  ASSERT_TRUE(
      ccsandbox::testing::PollUntil([&] { return StateOf("restart") == v1::SANDBOX_STATE_ERROR; },
                                    absl::Seconds(10), "the session to go to error"));
  Stream refused = Exec(Request("restart", {"exit", "7"}));
  EXPECT_EQ(refused.status.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(refused.status.error_message(), "launcher connection lost"))
      << refused.status.error_message();
  // A new session reaches the new launcher over the same channel.
  Launch("again");
  Stream again = Exec(Request("again", {"exit", "7"}));
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_EQ(again.events.back().exit().exit_code(), 7);
}

TEST_F(BrokerServiceTest, AnAbsentLauncherIsUnavailableNamingItsAddressUntilItIsBack) {
  launcher_->Start();
  StartBroker();
  Launch("first");  // the broker has met the launcher (and its create guard)
  launcher_->Stop();
  v1::SandboxHandle handle;
  grpc::Status refused = Launch(LaunchRequest("absent"), &handle);
  EXPECT_EQ(refused.error_code(), StatusCode::UNAVAILABLE);
  // The socket's path and the errno, never advice to weaken the policy.
  EXPECT_EQ(refused.error_message(), absl::StrCat("launcher not reachable at ",
                                                  launcher_address().substr(sizeof("unix:") - 1),
                                                  ": No such file or directory"));
  EXPECT_EQ(DirectGetSession("absent").error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(EgressDirs(), 1) << "a refused Launch left its proxies behind (only \"first\" has any)";
  launcher_->Start();
  Launch("absent");
  Stream again = Exec(Request("absent", {"exit"}));
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_EQ(again.events.back().exit().exit_code(), 0);
}

// A broker that never met the launcher cannot know whether it enforces the create-time denies:
// that is an outage (UNAVAILABLE naming the socket), never a reason to advise a weaker policy.
TEST_F(BrokerServiceTest, NeverMetLauncherIsAnOutageNotAPolicyQuestion) {
  StartBroker();
  v1::SandboxHandle handle;
  grpc::Status refused = Launch(LaunchRequest("never"), &handle);
  EXPECT_EQ(refused.error_code(), StatusCode::UNAVAILABLE) << refused.error_message();
  EXPECT_TRUE(absl::StartsWith(refused.error_message(), "launcher not reachable at "))
      << refused.error_message();
  EXPECT_FALSE(absl::StrContains(refused.error_message(), "writeDenyPatterns"));
}

}  // namespace
}  // namespace ccsandbox::broker
