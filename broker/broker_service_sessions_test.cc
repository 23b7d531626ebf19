// BrokerService against the fake launcher: a session's states through Launch, Exec, Kill and
// Destroy, Kill and Destroy reaching the launcher's Signal, and the plan a run hands the
// launcher. The fake and the fixture are broker/fake_launcher.h and
// broker/broker_service_fixture.h.
#include <signal.h>

#include <algorithm>
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
#include "policy/plan/input_limits.h"
#include "proto/launcher.grpc.pb.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/poll_until.h"

namespace ccsandbox::broker {
namespace {

using grpc::StatusCode;
using testing::BrokerServiceTest;
using testing::OpenExec;
using testing::Request;

TEST_F(BrokerServiceTest, SessionStatesFollowLaunchExecAndDestroy) {
  launcher_->Start();
  StartBroker();
  const v1::SandboxHandle launched = Launch("states");
  EXPECT_EQ(launched.session_id(), "states");
  EXPECT_EQ(launched.state(), v1::SANDBOX_STATE_WARM);  // never CREATED: Launch is synchronous
  EXPECT_EQ(StateOf("states"), v1::SANDBOX_STATE_WARM);
  ASSERT_EQ(ListSessions().size(), 1u);
  EXPECT_EQ(ListSessions()[0].session_id(), "states");

  OpenExec held(*stub_, Request("states", {"hold"}));
  ASSERT_TRUE(held.ReadUntilReady());
  EXPECT_EQ(StateOf("states"), v1::SANDBOX_STATE_ACTIVE);
  EXPECT_EQ(ListSessions()[0].state(), v1::SANDBOX_STATE_ACTIVE);
  // Another run ending leaves the session active while the first goes on.
  Stream other = Exec(Request("states", {"exit"}));
  ASSERT_TRUE(other.status.ok()) << other.status.error_message();
  EXPECT_EQ(StateOf("states"), v1::SANDBOX_STATE_ACTIVE);
  int signalled = 0;
  ASSERT_TRUE(Kill("states", "", &signalled).ok());
  EXPECT_EQ(signalled, 1);
  ASSERT_TRUE(held.Finish().ok());
  EXPECT_EQ(StateOf("states"), v1::SANDBOX_STATE_WARM);

  v1::SandboxHandle destroyed;
  ASSERT_TRUE(Destroy("states", &destroyed).ok());
  EXPECT_EQ(destroyed.session_id(), "states");
  EXPECT_EQ(destroyed.state(), v1::SANDBOX_STATE_DESTROYED);
  EXPECT_EQ(destroyed.backend(), v1::SANDBOX_BACKEND_NATIVE);
  EXPECT_TRUE(ListSessions().empty());
  EXPECT_EQ(EgressDirs(), 0) << "the session's proxies outlived it";

  // A destroyed session is unknown to every call; the launcher is not asked.
  const size_t runs = fake().plans().size();
  v1::SandboxHandle handle;
  int count = 0;
  const std::vector<std::pair<std::string, std::function<grpc::Status()>>> calls = {
      {"GetSession", [&] { return GetSession("states", &handle); }},
      {"Destroy", [&] { return Destroy("states", &handle); }},
      {"Kill", [&] { return Kill("states", "", &count); }},
      {"Exec", [&] { return Exec(Request("states", {"exit"})).status; }},
      {"Exec of a session never launched", [&] { return Exec(Request("never", {"exit"})).status; }},
  };
  for (const auto& [name, call] : calls) {
    const grpc::Status status = call();
    EXPECT_EQ(status.error_code(), StatusCode::NOT_FOUND) << name;
    EXPECT_TRUE(absl::StartsWith(status.error_message(), "sessionId: "))
        << name << ": " << status.error_message();
  }
  EXPECT_EQ(fake().plans().size(), runs);
}

// A fleet controller retries a Launch whose answer it lost: the identical request gets the
// session's handle and starts nothing twice; any other request for the id is ALREADY_EXISTS.
TEST_F(BrokerServiceTest, ALaunchIsIdempotentOnlyForTheIdenticalRequest) {
  launcher_->Start();
  StartBroker();
  for (const std::string backend : {"none", ""}) {
    const std::string id = "twice-" + (backend.empty() ? std::string("default") : backend);
    const v1::SandboxHandle first = Launch(id, backend);
    const size_t proxies = EgressDirs();
    v1::SandboxHandle handle;
    grpc::Status again = Launch(LaunchRequest(id, backend), &handle);
    ASSERT_TRUE(again.ok()) << id << ": " << again.error_message();
    EXPECT_EQ(handle.session_id(), id);
    EXPECT_EQ(handle.backend(), first.backend()) << id;
    EXPECT_EQ(handle.requested_backend(), first.requested_backend()) << id;
    EXPECT_EQ(EgressDirs(), proxies) << id << ": the retry started a second set of proxies";

    v1::LaunchRequest other_spec = LaunchRequest(id, backend);
    other_spec.mutable_spec()->set_mode("review");
    v1::LaunchRequest other_backend = LaunchRequest(id, backend.empty() ? "none" : "native");
    for (const v1::LaunchRequest* other : {&other_spec, &other_backend}) {
      v1::SandboxHandle refused;
      grpc::Status taken = Launch(*other, &refused);
      EXPECT_EQ(taken.error_code(), StatusCode::ALREADY_EXISTS) << id;
      EXPECT_TRUE(absl::StartsWith(taken.error_message(), "sessionId: ")) << taken.error_message();
      EXPECT_TRUE(refused.session_id().empty()) << "a refused Launch handed out the session";
    }
    EXPECT_EQ(EgressDirs(), proxies) << id;
  }
  EXPECT_EQ(ListSessions().size(), 2u);
}

struct KillCase {
  std::string name;
  std::string reason;    // KillRequest.reason
  bool signal_misses;    // the launcher has not registered the run (Signal: NOT_FOUND)
  std::string expected;  // the reason the launcher and the client see
};

void PrintTo(const KillCase& c, std::ostream* os) { *os << c.name; }

class KillTest : public BrokerServiceTest, public ::testing::WithParamInterface<KillCase> {};

TEST_P(KillTest, KillEndsTheRunThroughTheLaunchersSignal) {
  const KillCase& c = GetParam();
  launcher_->Start();
  StartBroker();
  Launch("kill");
  int signalled = -1;
  ASSERT_TRUE(Kill("kill", c.reason, &signalled).ok());
  EXPECT_EQ(signalled, 0) << "no run yet";
  EXPECT_TRUE(fake().signals().empty());

  if (c.signal_misses) fake().MissSignals();
  OpenExec held(*stub_, Request("kill", {"hold"}));
  ASSERT_TRUE(held.ReadUntilReady());
  ASSERT_TRUE(Kill("kill", c.reason, &signalled).ok());
  EXPECT_EQ(signalled, 1);
  grpc::Status status = held.Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();

  ASSERT_EQ(fake().plans().size(), 1u);
  const std::string run_id = fake().plans()[0].run_id();
  EXPECT_TRUE(absl::StartsWith(run_id, "kill-")) << run_id;
  EXPECT_EQ(held.events()[0].starting().run_id(), run_id);
  ASSERT_EQ(fake().signals().size(), 1u);
  EXPECT_EQ(fake().signals()[0].run_id(), run_id);
  EXPECT_EQ(fake().signals()[0].signal(), SIGKILL);
  EXPECT_EQ(fake().signals()[0].reason(), "stopped");
  EXPECT_EQ(fake().signals()[0].detail(), c.expected);
  // A Signal that missed the run ends its launcher call instead, which kills it there.
  EXPECT_EQ(fake().AwaitOutcome(run_id), c.signal_misses ? "cancelled" : "signalled");
  ASSERT_TRUE(held.events().back().has_killed());
  EXPECT_EQ(held.events().back().killed().reason(), "stopped");
  EXPECT_EQ(held.events().back().killed().detail(), c.expected);
  EXPECT_EQ(held.events().back().killed().signal(), SIGKILL);
  EXPECT_EQ(StateOf("kill"), v1::SANDBOX_STATE_WARM);
}

INSTANTIATE_TEST_SUITE_P(
    Reasons, KillTest,
    ::testing::Values(KillCase{"NoReason", "", false, "killed by request"},
                      KillCase{"WithReason", "enough", false, "killed: enough"},
                      KillCase{"SignalMissesTheRun", "enough", true, "killed: enough"},
                      // It travels in every killed event and log line: bounded, still a kill.
                      KillCase{"HugeReason", std::string(1 << 20, 'r'), false,
                               "killed: " + std::string(policy::kMaxQuotedBytes, 'r') + "…"}),
    [](const ::testing::TestParamInfo<KillCase>& info) { return info.param.name; });

// Killed while the launcher is still setting the run up (no event yet, Signal misses it): the
// client still gets a killed event and an OK end, not a bare CANCELLED.
TEST_F(BrokerServiceTest, AKillBeforeTheLaunchersFirstEventEndsTheRunKilled) {
  launcher_->Start();
  StartBroker();
  Launch("early");
  OpenExec mute(*stub_, Request("early", {"mute"}));
  ASSERT_TRUE(ccsandbox::testing::PollUntil([&] { return !fake().plans().empty(); },
                                            absl::Seconds(10), "the run's launcher call"));
  int signalled = -1;
  ASSERT_TRUE(Kill("early", "enough", &signalled).ok());
  EXPECT_EQ(signalled, 1);
  grpc::Status status = mute.Finish();
  ASSERT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
  ASSERT_FALSE(mute.events().empty());
  ASSERT_TRUE(mute.events().back().has_killed()) << mute.events().back().DebugString();
  EXPECT_EQ(mute.events().back().killed().reason(), "stopped");
  EXPECT_EQ(mute.events().back().killed().detail(), "killed: enough");
  EXPECT_EQ(StateOf("early"), v1::SANDBOX_STATE_WARM);
}

TEST_F(BrokerServiceTest, DestroyKillsTheRunsInFlight) {
  launcher_->Start();
  StartBroker();
  Launch("doomed");
  OpenExec first(*stub_, Request("doomed", {"hold"}));
  ASSERT_TRUE(first.ReadUntilReady());
  OpenExec second(*stub_, Request("doomed", {"hold"}));
  ASSERT_TRUE(second.ReadUntilReady());
  v1::SandboxHandle destroyed;
  ASSERT_TRUE(Destroy("doomed", &destroyed).ok());
  EXPECT_EQ(destroyed.state(), v1::SANDBOX_STATE_DESTROYED);
  for (OpenExec* exec : {&first, &second}) {
    grpc::Status status = exec->Finish();
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_TRUE(exec->events().back().has_killed());
    EXPECT_EQ(exec->events().back().killed().reason(), "stopped");
    EXPECT_EQ(exec->events().back().killed().detail(), "session destroyed");
  }
  // Both runs, then the session's sandbox.
  ASSERT_EQ(fake().signals().size(), 3u);
  for (const v1::SignalRequest& signal : fake().signals()) {
    EXPECT_EQ(signal.signal(), SIGKILL);
    EXPECT_EQ(signal.reason(), "stopped");
    EXPECT_EQ(signal.detail(), "session destroyed");
  }
  EXPECT_NE(fake().signals()[0].run_id(), fake().signals()[1].run_id());
  ASSERT_EQ(fake().sandbox_plans().size(), 1u);
  EXPECT_EQ(fake().signals()[2].run_id(), fake().sandbox_plans()[0].run_id());
  EXPECT_EQ(fake().AwaitOutcome(fake().sandbox_plans()[0].run_id()), "signalled");
  v1::SandboxHandle handle;
  EXPECT_EQ(GetSession("doomed", &handle).error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(EgressDirs(), 0);
}

// The session's sandbox gets the session's plan (egress, guard, forbidden dirs; no command);
// each run names that sandbox and brings only its own fields.
TEST_F(BrokerServiceTest, ThePlanCarriesTheSessionsEgressGuardAndForbiddenDirs) {
  launcher_->Start();
  StartBroker();
  Launch("plan");
  ASSERT_EQ(fake().sandbox_plans().size(), 1u);
  const v1::LaunchPlan sandbox = fake().sandbox_plans()[0];
  EXPECT_TRUE(sandbox.argv().empty());
  EXPECT_TRUE(absl::StartsWith(sandbox.egress().http_socket(), root_ + "/run/"))
      << sandbox.egress().http_socket();
  EXPECT_TRUE(absl::StartsWith(sandbox.egress().socks_socket(), root_ + "/run/"))
      << sandbox.egress().socks_socket();
  EXPECT_TRUE(sandbox.has_create_guard());
  EXPECT_FALSE(sandbox.mounts().empty());
  std::vector<std::string> forbidden(sandbox.forbidden_dirs().begin(),
                                     sandbox.forbidden_dirs().end());
  for (const std::string& dir : {root_ + "/launcher", root_ + "/run"}) {
    EXPECT_NE(std::find(forbidden.begin(), forbidden.end(), dir), forbidden.end()) << dir;
  }
  v1::ExecRequest request = Request("plan", {"exit", "0", "arg"});
  request.set_stdin("input");
  request.set_timeout_ms(1234);
  ASSERT_TRUE(Exec(request).status.ok());
  ASSERT_EQ(fake().plans().size(), 1u);
  const v1::LaunchPlan plan = fake().plans()[0];
  EXPECT_EQ(plan.sandbox_id(), sandbox.run_id());
  EXPECT_EQ(std::vector<std::string>(plan.argv().begin(), plan.argv().end()),
            (std::vector<std::string>{"exit", "0", "arg"}));
  EXPECT_EQ(plan.stdin(), "input");
  EXPECT_EQ(plan.timeout_ms(), 1234u);
  EXPECT_FALSE(plan.has_egress());
  EXPECT_FALSE(plan.has_create_guard());
  EXPECT_TRUE(plan.mounts().empty());
  EXPECT_TRUE(plan.forbidden_dirs().empty());
}

TEST_F(BrokerServiceTest, ASandboxThatCannotStartFailsTheLaunchAndLeavesNothing) {
  launcher_->Start();
  fake().RefuseSandboxes();
  StartBroker();
  v1::SandboxHandle handle;
  grpc::Status refused = Launch(LaunchRequest("nostart"), &handle);
  EXPECT_EQ(refused.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(refused.error_message(), "the sandbox did not start"))
      << refused.error_message();
  EXPECT_EQ(DirectGetSession("nostart").error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(EgressDirs(), 0);
}

TEST_F(BrokerServiceTest, ASandboxThatEndsByItselfPutsTheSessionInError) {
  launcher_->Start();
  StartBroker();
  Launch("dies");
  EXPECT_EQ(StateOf("dies"), v1::SANDBOX_STATE_WARM);
  ASSERT_EQ(fake().sandbox_plans().size(), 1u);
  fake().EndSandbox(fake().sandbox_plans()[0].run_id(), "its init was killed");
  ASSERT_TRUE(
      ccsandbox::testing::PollUntil([&] { return StateOf("dies") == v1::SANDBOX_STATE_ERROR; },
                                    absl::Seconds(10), "the session to go to error"));
  v1::SandboxHandle handle;
  ASSERT_TRUE(GetSession("dies", &handle).ok());
  EXPECT_TRUE(absl::StrContains(handle.error().message(), "its init was killed"))
      << handle.error().message();
  Stream refused = Exec(Request("dies", {"exit"}));
  EXPECT_EQ(refused.status.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(refused.status.error_message(), "its init was killed"));
  EXPECT_TRUE(fake().plans().empty()) << "a run reached the launcher of a dead sandbox";
  v1::SandboxHandle destroyed;
  EXPECT_TRUE(Destroy("dies", &destroyed).ok());
  EXPECT_EQ(EgressDirs(), 0);
}

}  // namespace
}  // namespace ccsandbox::broker
