// A session at its egress connection cap (per session, or the total of all sessions) is
// refused further connections — each refusal a violation in its own stream — but does not keep
// other sessions from launching or from reaching the network (real daemons, a sandboxed python
// opening 2,000 tunnels).
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "proxy/proxy_test_support.h"
#include "tests/client_fixture.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {
namespace {

// A sandboxed python that opens 2,000 CONNECT tunnels to `host` through its proxy, keeps those
// that are established, prints "holding ok=N refused=N other=N" and waits. Its stream is read
// on a thread of its own.
class GreedySession {
 public:
  GreedySession(v1::SandboxBroker::Stub& stub, const std::string& session, const std::string& host)
      : reader_(stub.Exec(&ctx_, Request(session, host))), thread_([this] { Read(); }) {}
  ~GreedySession() {
    if (joined_) return;
    ctx_.TryCancel();
    thread_.join();
    reader_->Finish();
  }

  std::string out() {
    absl::MutexLock lock(&mu_);
    return out_;
  }
  // Waits for the "holding" line (or the end of the stream); returns it (or all output).
  std::string WaitHolding() {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(this, &GreedySession::HoldingOrEnded), absl::Seconds(240));
    const size_t at = out_.find("holding");
    return at == std::string::npos ? out_ : out_.substr(at, out_.find('\n', at) - at);
  }
  // Waits for the stream to end (after a Kill).
  void Join() {
    thread_.join();
    reader_->Finish();
    joined_ = true;
  }
  // Its last event and how many refusals it was told about.
  v1::SandboxEvent last() {
    absl::MutexLock lock(&mu_);
    return last_;
  }
  int limit_violations() {
    absl::MutexLock lock(&mu_);
    return limit_violations_;
  }

 private:
  static v1::ExecRequest Request(const std::string& session, const std::string& host) {
    v1::ExecRequest request;
    request.set_session_id(session);
    request.add_argv("python3");
    request.add_argv("-c");
    request.add_argv(absl::StrCat(
        "import resource, socket, time\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))\n"
        "ok = refused = other = 0\n"
        "held = []\n"
        "for i in range(2000):\n"
        "    try:\n"
        "        s = socket.create_connection(('127.0.0.1', 3128), timeout=30)\n"
        "        s.sendall(b'CONNECT ",
        host,
        " HTTP/1.1\\r\\n\\r\\n')\n"
        "        head = b''\n"
        "        while b'\\r\\n\\r\\n' not in head:\n"
        "            chunk = s.recv(4096)\n"
        "            if not chunk: break\n"
        "            head += chunk\n"
        "    except OSError:\n"
        "        other += 1\n"
        "        continue\n"
        "    if head.startswith(b'HTTP/1.1 200'):\n"
        "        ok += 1\n"
        "        held.append(s)\n"
        "    elif head.startswith(b'HTTP/1.1 503'):\n"
        "        refused += 1\n"
        "        s.close()\n"
        "    else:\n"
        "        other += 1\n"
        "        s.close()\n"
        "print('holding ok=%d refused=%d other=%d' % (ok, refused, other), flush=True)\n"
        "time.sleep(600)\n"));
    return request;
  }

  void Read() {
    v1::SandboxEvent event;
    while (reader_->Read(&event)) {
      absl::MutexLock lock(&mu_);
      out_ += event.stdout();
      if (event.has_violation() && absl::StrContains(event.violation().raw(), "connection limit")) {
        ++limit_violations_;
      }
      last_ = event;
    }
    absl::MutexLock lock(&mu_);
    ended_ = true;
  }
  bool HoldingOrEnded() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ended_ || absl::StrContains(out_, "holding");
  }

  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader_;
  absl::Mutex mu_;
  std::string out_ ABSL_GUARDED_BY(mu_);
  int limit_violations_ ABSL_GUARDED_BY(mu_) = 0;
  v1::SandboxEvent last_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool joined_ = false;
  std::thread thread_;
};

class ConnectionCapTest : public ClientTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(echo_.ok());
    echo_host_ = absl::StrCat("allowed.test:", echo_.port());
    web_host_ = absl::StrCat("allowed.test:", origin_.port());
  }

  // A session that allows the web origin fetches from it through its own proxy.
  std::string Fetch(const std::string& session) {
    grpc::Status status;
    std::vector<v1::SandboxEvent> events =
        Exec(session,
             {"sh", "-c",
              absl::StrCat("curl -sS -o /dev/null -w 'code=%{http_code}' --max-time 20 http://",
                           web_host_, "/")},
             &status);
    std::string out;
    for (const v1::SandboxEvent& e : events) out += e.stdout() + e.stderr();
    return status.ok() ? out : status.error_message();
  }
  void Kill(const std::string& session) {
    grpc::ClientContext ctx;
    v1::KillRequest kill;
    kill.set_session_id(session);
    v1::KillResponse response;
    EXPECT_TRUE(stub_->Kill(&ctx, kill, &response).ok());
  }

  proxy::testing::TestServer echo_{proxy::testing::EchoHandler};
  proxy::testing::HttpOrigin origin_;
  std::string echo_host_;
  std::string web_host_;
};

// An unprivileged broker raises its descriptor limit only as far as its hard limit goes.
class ConnectionCapTestByBroker : public ConnectionCapTest,
                                  public ::testing::WithParamInterface<bool> {};

TEST_P(ConnectionCapTestByBroker, ASessionAtItsCapIsRefusedButDoesNotStopOthers) {
  StartDaemons({.unprivileged_broker = GetParam()});
  ASSERT_TRUE(Launch("greedy", {echo_host_}).ok());
  ASSERT_TRUE(Launch("neighbour", {web_host_}).ok());
  GreedySession greedy(*stub_, "greedy", echo_host_);
  EXPECT_EQ(greedy.WaitHolding(), "holding ok=512 refused=1488 other=0") << daemons_->BrokerLog();
  EXPECT_TRUE(absl::StrContains(daemons_->BrokerLog(), "connection limit"))
      << daemons_->BrokerLog();
  // Meanwhile: a new session launches, and another reaches the network through its proxy.
  EXPECT_TRUE(Launch("late").ok());
  EXPECT_EQ(Fetch("neighbour"), "code=200");
  EXPECT_EQ(origin_.accepted(), 1);
  EXPECT_EQ(echo_.accepted(), 512);
  Kill("greedy");
  greedy.Join();
  EXPECT_TRUE(greedy.last().has_killed()) << greedy.last().DebugString();
  // Every refusal was a violation in the greedy session's own stream (none dropped: it reads).
  EXPECT_EQ(greedy.limit_violations(), 1488);
}

TEST_F(ConnectionCapTest, TheTotalCapStillLeavesALightSessionItsConnections) {
  DaemonOptions options;
  options.broker_flags = {"--egress-max-connections=600"};
  StartDaemons(options);
  ASSERT_TRUE(Launch("greedy-1", {echo_host_}).ok());
  ASSERT_TRUE(Launch("greedy-2", {echo_host_}).ok());
  ASSERT_TRUE(Launch("light", {web_host_}).ok());
  GreedySession first(*stub_, "greedy-1", echo_host_);
  EXPECT_EQ(first.WaitHolding(), "holding ok=512 refused=1488 other=0");
  GreedySession second(*stub_, "greedy-2", echo_host_);
  EXPECT_EQ(second.WaitHolding(), "holding ok=88 refused=1912 other=0");  // 600 in all
  EXPECT_TRUE(absl::StrContains(daemons_->BrokerLog(), "the egress proxies of all sessions"))
      << daemons_->BrokerLog();
  EXPECT_TRUE(Launch("late").ok());
  EXPECT_EQ(Fetch("light"), "code=200");  // below its guaranteed connections
  Kill("greedy-1");
  Kill("greedy-2");
  first.Join();
  second.Join();
}

INSTANTIATE_TEST_SUITE_P(Brokers, ConnectionCapTestByBroker, ::testing::Bool(), BrokerIdentityName);

}  // namespace
}  // namespace ccsandbox::testing
