// The broker tells the truth about a launcher outage: health NOT_SERVING (overall and for
// SandboxBroker; the policy service, which needs no launcher, stays SERVING) while the launcher
// is down and SERVING once it is back; Probe asks the launcher now; a Launch is UNAVAILABLE
// naming the socket and the errno, and never advises weakening the policy. (A broker that booted
// without ever meeting the launcher: e2e_faults_test's LauncherDownAtBoot.)
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/poll_until.h"

namespace ccsandbox::testing {
namespace {

// grpc.health.v1.Health/Check through Python's generic stub (no generated code): "0801"
// SERVING, "0802" NOT_SERVING.
std::string Health(const Daemons& d, const std::string& service) {
  ProgramResult r = RunProgram(
      {"/usr/bin/python3", "-c",
       "import grpc, sys\n"
       "check = grpc.insecure_channel(sys.argv[1]).unary_unary('/grpc.health.v1.Health/Check')\n"
       "name = sys.argv[2].encode()\n"
       "print(check((b'\\x0a' + bytes([len(name)]) + name) if name else b'', timeout=5).hex())\n",
       d.broker_address(), service});
  return r.exit_code == 0 ? r.out.substr(0, r.out.find('\n')) : "error: " + r.err;
}

grpc::Status LaunchWritable(v1::SandboxBroker::Stub& stub, const std::string& id,
                            const std::string& dir) {
  v1::LaunchRequest request;
  request.mutable_spec()->set_session_id(id);
  v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
  bind->set_host_path(dir);
  bind->set_guest_path(dir);
  v1::SandboxHandle handle;
  grpc::ClientContext ctx;
  return stub.Launch(&ctx, request, &handle);
}

TEST(LauncherOutage, HealthProbeAndLaunchSayWhatIsWrong) {
  absl::StatusOr<std::unique_ptr<Daemons>> started = Daemons::Start();
  ASSERT_TRUE(started.ok()) << started.status();
  Daemons& d = **started;
  auto stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel(d.broker_address(), grpc::InsecureChannelCredentials()));
  const std::string dir = d.MakeWorkdir();
  EXPECT_TRUE(
      PollUntil([&] { return Health(d, "") == "0801"; }, absl::Seconds(10), "health SERVING"));

  ASSERT_EQ(d.StopLauncher(), 0);
  EXPECT_TRUE(
      PollUntil([&] { return Health(d, "") == "0802"; }, absl::Seconds(10), "health NOT_SERVING"))
      << Health(d, "");
  EXPECT_EQ(Health(d, "ccsandbox.v1.SandboxBroker"), "0802");
  EXPECT_EQ(Health(d, "ccsandbox.v1.SandboxPolicy"), "0801");
  v1::ProbeResponse probe;
  grpc::ClientContext pctx;
  ASSERT_TRUE(stub->Probe(&pctx, v1::ProbeRequest(), &probe).ok());
  EXPECT_TRUE(absl::StrContains(probe.filename_denies_note(),
                                "launcher not reachable at " + d.launcher_socket()))
      << probe.filename_denies_note();
  grpc::Status refused = LaunchWritable(*stub, "down", dir);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE) << refused.error_message();
  EXPECT_TRUE(absl::StartsWith(refused.error_message(),
                               "launcher not reachable at " + d.launcher_socket() + ": "))
      << refused.error_message();
  EXPECT_FALSE(absl::StrContains(refused.error_message(), "writeDenyPatterns"));
  EXPECT_TRUE(absl::StrContains(d.BrokerLog(), "health NOT_SERVING")) << d.BrokerLog();

  ASSERT_TRUE(d.RestartLauncher().ok());
  EXPECT_TRUE(
      PollUntil([&] { return Health(d, "") == "0801"; }, absl::Seconds(10), "health SERVING"))
      << Health(d, "");
  EXPECT_EQ(Health(d, "ccsandbox.v1.SandboxBroker"), "0801");
  grpc::Status back = LaunchWritable(*stub, "back", dir);
  EXPECT_TRUE(back.ok()) << back.error_message();
}

}  // namespace
}  // namespace ccsandbox::testing
