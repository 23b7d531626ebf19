// One broker never disturbs another: a second broker started on a live broker's runtime
// directory or listen socket is refused before it touches anything, and the first one's session
// keeps working (its proxy sockets are intact); a listen address that is not a Unix socket needs
// an explicit opt-in, because nobody is authenticated over TCP.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"

namespace ccsandbox::testing {
namespace {

TEST(SecondBroker, RefusedWithoutDisturbingTheFirst) {
  absl::StatusOr<std::unique_ptr<Daemons>> d = Daemons::Start();
  ASSERT_TRUE(d.ok()) << d.status();
  auto stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel((*d)->broker_address(), grpc::InsecureChannelCredentials()));
  v1::LaunchRequest launch;
  launch.mutable_spec()->set_session_id("s");
  launch.mutable_spec()->add_egress_allowlist("example.com");
  v1::SandboxHandle handle;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->Launch(&ctx, launch, &handle).ok());

  auto sockets = [&] { return RunProgram({"find", (*d)->runtime_dir(), "-type", "s"}).out; };
  const std::string before = sockets();
  ASSERT_FALSE(before.empty()) << "the session's proxies have no sockets?";
  const std::string broker = Runfile("broker/sandbox_brokerd");
  const std::string launcher = "--launcher=unix:" + (*d)->launcher_socket();
  struct Case {
    std::vector<std::string> flags;
    const char* says;
  } cases[] = {
      // Same runtime directory (another listen socket): refused before it empties anything.
      {{"--listen=unix:" + (*d)->dir() + "/second.sock", "--runtime-dir=" + (*d)->runtime_dir()},
       "in use by another broker"},
      // Same listen socket (its own runtime directory).
      {{"--listen=" + (*d)->broker_address(), "--runtime-dir=" + (*d)->dir() + ".run2"},
       "already listens"},
      // TCP without the opt-in.
      {{"--listen=127.0.0.1:0", "--runtime-dir=" + (*d)->dir() + ".run3"}, "--allow-tcp-listen"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {"timeout", "20", broker, launcher};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    ProgramResult r = RunProgram(argv);
    EXPECT_NE(r.exit_code, 0) << c.says;
    EXPECT_NE(r.exit_code, 124) << "the second broker kept running: " << c.says;
    EXPECT_TRUE(absl::StrContains(r.out + r.err, c.says)) << r.out << r.err;
  }
  RunProgram({"rm", "-rf", (*d)->dir() + ".run2", (*d)->dir() + ".run3"});
  EXPECT_EQ(sockets(), before);
  // The first broker's session still reaches its proxies and runs commands.
  std::vector<v1::SandboxEvent> events =
      ExecEvents(*stub, ShExec("s", "echo alive; test -n \"$HTTPS_PROXY\" && echo proxied"),
                 nullptr, absl::Seconds(30));
  EXPECT_EQ(StdoutOf(events), "alive\nproxied\n") << StderrOf(events) << (*d)->BrokerLog();
  EXPECT_FALSE(AnyProcessMatches(broker + " " + launcher + " --listen=unix:" + (*d)->dir()));
}

}  // namespace
}  // namespace ccsandbox::testing
