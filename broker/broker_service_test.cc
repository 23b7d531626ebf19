// BrokerService against the fake launcher: the labels on every event, the backend a disabled
// sandbox runs on, the launcher's create guard, and refusals of bad input. The session state
// machine is in broker_service_sessions_test, one-shot sessions and launcher restarts in
// broker_service_one_shot_test.
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

namespace ccsandbox::broker {
namespace {

using grpc::StatusCode;
using testing::BrokerServiceTest;
using testing::OpenExec;
using testing::Request;

struct LabelCase {
  std::string name;
  std::string requested;  // LaunchRequest.backend
  std::string program;
  v1::SandboxBackend requested_backend;
  v1::SandboxBackend actual;
};

void PrintTo(const LabelCase& c, std::ostream* os) { *os << c.name; }

class LabelTest : public BrokerServiceTest, public ::testing::WithParamInterface<LabelCase> {};

TEST_P(LabelTest, EveryEventCarriesTheSessionAndItsActualBackend) {
  const LabelCase& c = GetParam();
  launcher_->Start();
  StartBroker();
  const v1::SandboxHandle handle = Launch("labels", c.requested);
  EXPECT_EQ(handle.requested_backend(), c.requested_backend);
  EXPECT_EQ(handle.backend(), c.actual);
  Stream run = Exec(Request("labels", {c.program}));
  ASSERT_TRUE(run.status.ok()) << run.status.error_message();
  // In the launcher's order, then the broker's own killed event if the launcher went away.
  std::vector<v1::SandboxEvent::EventCase> kinds;
  for (const v1::SandboxEvent& event : run.events) kinds.push_back(event.event_case());
  EXPECT_EQ(
      kinds,
      c.program == "exit"
          ? (std::vector<v1::SandboxEvent::EventCase>{
                v1::SandboxEvent::kStarting, v1::SandboxEvent::kReady, v1::SandboxEvent::kStdout,
                v1::SandboxEvent::kStderr, v1::SandboxEvent::kExit})
          : (std::vector<v1::SandboxEvent::EventCase>{
                v1::SandboxEvent::kStarting, v1::SandboxEvent::kReady, v1::SandboxEvent::kKilled}));
  // The fake labels every event wrongly; none of that reaches the client.
  for (const v1::SandboxEvent& event : run.events) {
    EXPECT_EQ(event.session_id(), "labels") << event.DebugString();
    EXPECT_EQ(event.backend(), c.actual) << event.DebugString();
  }
  ASSERT_EQ(fake().plans().size(), 1u);
  EXPECT_EQ(fake().plans()[0].backend(), c.actual);
  EXPECT_EQ(fake().plans()[0].session_id(), "labels");
}

INSTANTIATE_TEST_SUITE_P(
    Backends, LabelTest,
    ::testing::Values(LabelCase{"DispatchDefault", "", "exit", v1::SANDBOX_BACKEND_UNSPECIFIED,
                                v1::SANDBOX_BACKEND_NATIVE},
                      LabelCase{"Docker", "docker", "exit", v1::SANDBOX_BACKEND_NATIVE,
                                v1::SANDBOX_BACKEND_NATIVE},
                      LabelCase{"None", "none", "exit", v1::SANDBOX_BACKEND_NONE,
                                v1::SANDBOX_BACKEND_NONE},
                      // The killed event the broker makes itself is labelled too.
                      LabelCase{"NativeLauncherLost", "", "lose", v1::SANDBOX_BACKEND_UNSPECIFIED,
                                v1::SANDBOX_BACKEND_NATIVE},
                      LabelCase{"NoneLauncherLost", "none", "lose", v1::SANDBOX_BACKEND_NONE,
                                v1::SANDBOX_BACKEND_NONE}),
    [](const ::testing::TestParamInfo<LabelCase>& info) { return info.param.name; });

TEST_F(BrokerServiceTest, ADisabledSandboxRunsTheDefaultOnNoneAndRefusesNative) {
  launcher_->Start();
  StartBroker(/*sandbox_enabled=*/false);
  EXPECT_EQ(Launch("off").backend(), v1::SANDBOX_BACKEND_NONE);
  v1::SandboxHandle handle;
  grpc::Status native = Launch(LaunchRequest("off-native", "native"), &handle);
  EXPECT_EQ(native.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StartsWith(native.error_message(), "backend: ")) << native.error_message();
  Stream run = Exec(Request("off", {"exit"}));
  ASSERT_TRUE(run.status.ok());
  for (const v1::SandboxEvent& event : run.events) {
    EXPECT_EQ(event.backend(), v1::SANDBOX_BACKEND_NONE);
  }
  EXPECT_EQ(fake().probes(), 0) << "the create guard matters to native sessions only";
}

struct CreateGuardCase {
  std::string name;
  bool available;     // what the launcher's probe says
  bool opt_out;       // the spec sets writeDenyPatterns to an empty list
  StatusCode launch;  // a writable native Launch
  std::string field;  // what its error starts with
};

void PrintTo(const CreateGuardCase& c, std::ostream* os) { *os << c.name; }

class CreateGuardTest : public BrokerServiceTest,
                        public ::testing::WithParamInterface<CreateGuardCase> {};

TEST_P(CreateGuardTest, ProbeAndLaunchAskTheLauncherAboutItsCreateGuard) {
  const CreateGuardCase& c = GetParam();
  v1::LauncherProbeResponse probe;
  probe.set_create_guard_available(c.available);
  probe.set_create_guard_reason(c.available ? "enforced by the fake" : "no seccomp notify here");
  launcher_->Start(probe);
  StartBroker();
  {
    grpc::ClientContext context;
    v1::ProbeResponse response;
    ASSERT_TRUE(stub_->Probe(&context, v1::ProbeRequest(), &response).ok());
    EXPECT_EQ(response.dispatch_backend(), v1::SANDBOX_BACKEND_NATIVE);
    EXPECT_EQ(response.filename_denies_enforced(), c.available);
    EXPECT_TRUE(absl::StrContains(response.filename_denies_note(), probe.create_guard_reason()))
        << response.filename_denies_note();
    // It answered: reachable, and its peer check let the broker in (sandboxctl doctor says so).
    EXPECT_TRUE(response.launcher_answered());
    EXPECT_TRUE(absl::StrContains(response.launcher_note(), "(peer check passed)"))
        << response.launcher_note();
  }
  v1::LaunchRequest request = LaunchRequest("guard");
  if (c.opt_out) request.mutable_spec()->mutable_write_deny_patterns();
  v1::SandboxHandle handle;
  grpc::Status status = Launch(request, &handle);
  EXPECT_EQ(status.error_code(), c.launch) << status.error_message();
  if (!status.ok()) {
    EXPECT_TRUE(absl::StartsWith(status.error_message(), c.field + ": ")) << status.error_message();
    // The refusal says what the launcher said.
    EXPECT_TRUE(absl::EndsWith(status.error_message(), "[launcher: no seccomp notify here]"))
        << status.error_message();
  }
  EXPECT_EQ(fake().probes(), 1) << "the launcher's answer is kept once it has given one";
  EXPECT_EQ(EgressDirs(), status.ok() ? 1 : 0);
}

INSTANTIATE_TEST_SUITE_P(
    Answers, CreateGuardTest,
    ::testing::Values(CreateGuardCase{"Available", true, false, StatusCode::OK, ""},
                      CreateGuardCase{"Missing", false, false, StatusCode::FAILED_PRECONDITION,
                                      "writeDenyPatterns"},
                      CreateGuardCase{"MissingWithOptOut", false, true,
                                      StatusCode::FAILED_PRECONDITION, "denyWriteNames"}),
    [](const ::testing::TestParamInfo<CreateGuardCase>& info) { return info.param.name; });

struct BadInputCase {
  std::string name;
  std::function<void(v1::LaunchRequest&)> launch;  // null: the Launch is valid
  std::function<void(v1::ExecRequest&)> exec;      // applied to a valid Exec
  std::string field;                               // what the message starts with
};

void PrintTo(const BadInputCase& c, std::ostream* os) { *os << c.name; }

class BadInputTest : public BrokerServiceTest,
                     public ::testing::WithParamInterface<BadInputCase> {};

TEST_P(BadInputTest, IsInvalidArgumentNamingTheField) {
  const BadInputCase& c = GetParam();
  launcher_->Start();
  StartBroker();
  v1::LaunchRequest launch = LaunchRequest("bad");
  grpc::Status status;
  if (c.launch) {
    c.launch(launch);
    v1::SandboxHandle handle;
    status = Launch(launch, &handle);
    EXPECT_TRUE(ListSessions().empty());
    EXPECT_EQ(EgressDirs(), 0);
  } else {
    Launch("bad");
    v1::ExecRequest exec = Request("bad", {"exit"});
    c.exec(exec);
    Stream run = Exec(exec);
    EXPECT_TRUE(run.events.empty());
    status = run.status;
    EXPECT_EQ(StateOf("bad"), v1::SANDBOX_STATE_WARM);
  }
  EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT) << status.error_message();
  // The field, then ": ".
  EXPECT_TRUE(absl::StartsWith(status.error_message(), c.field + ": ")) << status.error_message();
  EXPECT_TRUE(fake().plans().empty()) << "a refused request reached the launcher";
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadInputTest,
    ::testing::Values(
        BadInputCase{"Backend", [](v1::LaunchRequest& r) { r.set_backend("vm"); }, nullptr,
                     "backend"},
        BadInputCase{"SessionIdMissing",
                     [](v1::LaunchRequest& r) { r.mutable_spec()->clear_session_id(); }, nullptr,
                     "sessionId"},
        BadInputCase{"SessionIdCharacters",
                     [](v1::LaunchRequest& r) { r.mutable_spec()->set_session_id("a/b"); }, nullptr,
                     "sessionId"},
        BadInputCase{"Mode", [](v1::LaunchRequest& r) { r.mutable_spec()->set_mode("party"); },
                     nullptr, "mode"},
        BadInputCase{"HostPathRelative",
                     [](v1::LaunchRequest& r) {
                       r.mutable_spec()->mutable_bind_mounts(0)->set_host_path("work");
                     },
                     nullptr, "bindMounts[0].hostPath"},
        BadInputCase{"GuestPathDiffersOnNative",
                     [](v1::LaunchRequest& r) {
                       r.mutable_spec()->mutable_bind_mounts(0)->set_guest_path("/elsewhere");
                     },
                     nullptr, "bindMounts[0].guestPath"},
        BadInputCase{"BindOfTheLaunchersSocketDir",
                     [](v1::LaunchRequest& r) {
                       v1::SandboxBindMount* bind = r.mutable_spec()->mutable_bind_mounts(0);
                       std::string path = bind->host_path();
                       path.replace(path.rfind("/work"), 5, "/launcher");
                       bind->set_host_path(path);
                       bind->set_guest_path(path);
                     },
                     nullptr, "bindMounts[0].hostPath"},
        BadInputCase{"EgressAllowlist",
                     [](v1::LaunchRequest& r) {
                       r.mutable_spec()->add_egress_allowlist("no spaces allowed");
                     },
                     nullptr, "egressAllowlist[0]"},
        BadInputCase{"ArgvEmpty", nullptr, [](v1::ExecRequest& r) { r.clear_argv(); }, "argv"},
        BadInputCase{"EnvName", nullptr,
                     [](v1::ExecRequest& r) { (*r.mutable_env())["A=B"] = "c"; }, "env['A=B']"},
        BadInputCase{"GuestWorkdir", nullptr,
                     [](v1::ExecRequest& r) { r.set_guest_workdir("relative"); }, "guestWorkdir"},
        BadInputCase{"Timeout", nullptr,
                     [](v1::ExecRequest& r) { r.set_timeout_ms(uint64_t{8} * 24 * 3600 * 1000); },
                     "timeoutMs"},
        BadInputCase{"Stdin", nullptr,
                     [](v1::ExecRequest& r) { r.set_stdin(std::string((4 << 20) + 1, 'x')); },
                     "stdin"}),
    [](const ::testing::TestParamInfo<BadInputCase>& info) { return info.param.name; });

}  // namespace
}  // namespace ccsandbox::broker
