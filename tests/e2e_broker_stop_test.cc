// Stopping the broker is orderly: on SIGTERM a running command's client gets its `killed` event
// (reason stopped, saying the broker is stopping) and an OK end of stream instead of a bare
// UNAVAILABLE, the socket file goes and the broker exits 0; SIGHUP stops it the same way, with
// no stale socket left behind.
#include <signal.h>
#include <sys/wait.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"
#include "tests/poll_until.h"

namespace ccsandbox::testing {
namespace {

bool IsZombieOrGone(pid_t pid) {
  const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t paren = stat.rfind(')');
  return stat.empty() || (paren != std::string::npos && stat.substr(paren + 2, 1) == "Z");
}

TEST(BrokerStop, SigtermEndsRunsWithKilledEventsAndExitsCleanly) {
  absl::StatusOr<std::unique_ptr<Daemons>> started = Daemons::Start();
  ASSERT_TRUE(started.ok()) << started.status();
  Daemons& d = **started;
  auto stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel(d.broker_address(), grpc::InsecureChannelCredentials()));
  v1::LaunchRequest launch;
  launch.mutable_spec()->set_session_id("s");
  v1::SandboxHandle handle;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->Launch(&ctx, launch, &handle).ok());
  std::vector<v1::SandboxEvent> events;
  grpc::Status status;
  std::thread client(
      [&] { events = ExecEvents(*stub, ShExec("s", "sleep 3117"), &status, absl::Seconds(30)); });
  ASSERT_TRUE(WaitForProcessMatching("sleep 3117", 30));
  const std::string socket = d.broker_address().substr(sizeof("unix:") - 1);
  const int exit = d.StopBroker();
  client.join();
  EXPECT_TRUE(WIFEXITED(exit) && WEXITSTATUS(exit) == 0) << exit << "\n" << d.BrokerLog();
  EXPECT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(events.back().has_killed()) << events.back().DebugString();
  EXPECT_EQ(events.back().killed().reason(), "stopped");
  EXPECT_TRUE(absl::StrContains(events.back().killed().detail(), "the broker is stopping"))
      << events.back().DebugString();
  EXPECT_FALSE(PathExists(socket));
  EXPECT_TRUE(WaitNoProcessMatches("sleep 3117", 10));
}

TEST(BrokerStop, SighupLeavesNoStaleSocket) {
  absl::StatusOr<std::unique_ptr<Daemons>> started = Daemons::Start();
  ASSERT_TRUE(started.ok()) << started.status();
  Daemons& d = **started;
  const std::string socket = d.broker_address().substr(sizeof("unix:") - 1);
  ASSERT_TRUE(PathExists(socket));
  ASSERT_EQ(kill(d.broker_pid(), SIGHUP), 0);
  EXPECT_TRUE(PollUntil([&] { return IsZombieOrGone(d.broker_pid()); }, absl::Seconds(10),
                        "the broker to exit on SIGHUP"));
  EXPECT_FALSE(PathExists(socket));
  const int exit = d.StopBroker();  // reaps it
  EXPECT_TRUE(WIFEXITED(exit) && WEXITSTATUS(exit) == 0) << exit << "\n" << d.BrokerLog();
}

}  // namespace
}  // namespace ccsandbox::testing
