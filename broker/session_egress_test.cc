#include "broker/session_egress.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "proxy/proxy_test_support.h"
#include "proxy/static_resolver.h"

namespace ccsandbox::broker {
namespace {

// A connection to the Unix socket `path`; invalid when nothing accepts there.
UniqueFd ConnectUnix(const std::string& path) {
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return UniqueFd();
  return fd;
}

std::string Exchange(int fd, const std::string& request) {
  EXPECT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  std::string response;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    response.append(buf, n);
    if (response.find("\r\n\r\n") != std::string::npos) break;
  }
  return response;
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

class SessionEgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = absl::StrCat("/tmp/egress-test-", getpid());
    absl::StatusOr<std::unique_ptr<RuntimeDir>> dir = RuntimeDir::Open(root_);
    ASSERT_TRUE(dir.ok()) << dir.status();
    runtime_dir_ = *std::move(dir);
    egress_ = std::make_unique<SessionEgress>(loop_, resolver_, *runtime_dir_, events_);
  }
  void TearDown() override {
    egress_.reset();
    runtime_dir_.reset();
    EXPECT_FALSE(Exists(root_));
  }

  v1::SandboxSpec Spec(const std::string& id, std::vector<std::string> allow) {
    v1::SandboxSpec spec;
    spec.set_session_id(id);
    for (const std::string& entry : allow) spec.add_egress_allowlist(entry);
    return spec;
  }

  proxy::EventLoop loop_;
  std::shared_ptr<proxy::StaticResolver> resolver_ = std::make_shared<proxy::StaticResolver>();
  std::string root_;
  std::unique_ptr<RuntimeDir> runtime_dir_;
  SessionEvents events_;
  std::unique_ptr<SessionEgress> egress_;
};

TEST_F(SessionEgressTest, StartsProxiesOnUnixSocketsAndRemovesThemAtStop) {
  absl::StatusOr<EgressSummary> started = egress_->Start(Spec("s1", {}));
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_TRUE(started->network_enabled);
  EXPECT_GT(started->allow_entries, 0u);  // the baseline
  const v1::EgressPlan plan = started->plan;
  struct stat st;
  ASSERT_EQ(lstat(plan.http_socket().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  ASSERT_EQ(lstat(plan.socks_socket().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_TRUE(plan.http_socket().rfind(root_, 0) == 0);
  ASSERT_TRUE(egress_->PlanFor("s1").has_value());
  EXPECT_EQ(egress_->PlanFor("s1")->http_socket(), plan.http_socket());
  EXPECT_EQ(egress_->Start(Spec("s1", {})).status().code(), absl::StatusCode::kAlreadyExists);

  egress_->Stop("s1");
  EXPECT_FALSE(egress_->PlanFor("s1").has_value());
  EXPECT_FALSE(Exists(plan.http_socket()));
  EXPECT_FALSE(Exists(plan.socks_socket()));
  egress_->Stop("s1");  // idempotent
}

TEST_F(SessionEgressTest, BadAllowlistEntryIsInvalidArgumentAndLeavesNothing) {
  absl::StatusOr<EgressSummary> started = egress_->Start(Spec("s1", {"*.*.example.com"}));
  EXPECT_EQ(started.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(started.status().message().find("*.*.example.com"), std::string::npos)
      << started.status();
  EXPECT_FALSE(egress_->PlanFor("s1").has_value());
}

TEST_F(SessionEgressTest, RefusalReachesTheSessionsSubscribersOnly) {
  ASSERT_TRUE(egress_->Start(Spec("a", {})).ok());
  ASSERT_TRUE(egress_->Start(Spec("b", {})).ok());
  absl::Mutex mu;
  std::vector<v1::SandboxEvent> seen_a, seen_b;
  events_.Subscribe("a", [&](const v1::SandboxEvent& e) {
    absl::MutexLock lock(&mu);
    seen_a.push_back(e);
  });
  events_.Subscribe("b", [&](const v1::SandboxEvent& e) {
    absl::MutexLock lock(&mu);
    seen_b.push_back(e);
  });
  std::string response;
  {  // the connection is closed before the refusal is awaited
    const UniqueFd fd = ConnectUnix(egress_->PlanFor("a")->http_socket());
    ASSERT_TRUE(fd.valid());
    response = Exchange(fd.get(), "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n");
  }
  EXPECT_EQ(response.rfind("HTTP/1.1 403", 0), 0u) << response;
  absl::MutexLock lock(&mu);
  EXPECT_TRUE(mu.AwaitWithTimeout(
      absl::Condition(
          +[](std::vector<v1::SandboxEvent>* v) { return !v->empty(); }, &seen_a),
      absl::Seconds(10)));
  ASSERT_EQ(seen_a.size(), 1u);
  EXPECT_EQ(seen_a[0].violation().action(), "network-outbound");
  EXPECT_EQ(seen_a[0].violation().target(), "evil.test:443");
  EXPECT_FALSE(seen_a[0].violation().raw().empty());
  EXPECT_TRUE(seen_b.empty());
  EXPECT_EQ(resolver_->lookups("evil.test"), 0);
}

TEST_F(SessionEgressTest, NetworkDisabledRefusesEvenBaselineHosts) {
  v1::SandboxSpec spec = Spec("off", {});
  spec.set_network_enabled(false);
  absl::StatusOr<EgressSummary> started = egress_->Start(spec);
  ASSERT_TRUE(started.ok());
  EXPECT_FALSE(started->network_enabled);
  const UniqueFd fd = ConnectUnix(started->plan.http_socket());
  ASSERT_TRUE(fd.valid());
  const std::string response =
      Exchange(fd.get(), "CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n");
  EXPECT_EQ(response.rfind("HTTP/1.1 403", 0), 0u) << response;
}

TEST_F(SessionEgressTest, DestructionStopsEverySessionAndRemovesTheSockets) {
  ASSERT_TRUE(egress_->Start(Spec("x", {})).ok());
  const std::string socket = egress_->PlanFor("x")->http_socket();
  const UniqueFd fd = ConnectUnix(socket);
  ASSERT_TRUE(fd.valid());
  egress_.reset();
  EXPECT_FALSE(Exists(socket));
  char c;
  EXPECT_LE(read(fd.get(), &c, 1), 0);  // the open connection was closed with the session
}

// macOS's listeners, exercised here over real TCP: what differs is only where the proxies
// listen and that they require the session's credentials; the allowlist, the refusals and the
// violation events are the same.
class LoopbackEgressTest : public SessionEgressTest {
 protected:
  void SetUp() override {
    SessionEgressTest::SetUp();
    egress_ = std::make_unique<SessionEgress>(loop_, resolver_, *runtime_dir_, events_,
                                              EgressLimits{}, nullptr, nullptr, BrokerMetrics{},
                                              EgressListeners::kLoopbackPorts);
    resolver_->Add("allowed.test", {"127.0.0.1"});
  }

  // "Proxy-Authorization: Basic ..." from the userinfo of a plan's proxy URL.
  static std::string Authorization(const std::string& url) {
    const size_t begin = url.find("//") + 2;
    const size_t end = url.find('@');
    return absl::StrCat("Proxy-Authorization: Basic ",
                        absl::Base64Escape(url.substr(begin, end - begin)), "\r\n");
  }

  static std::string Connect(uint16_t port, const std::string& target, const std::string& extra) {
    const UniqueFd fd = proxy::testing::ConnectTo(port);
    proxy::testing::SendAll(
        fd.get(),
        absl::StrCat("CONNECT ", target, " HTTP/1.1\r\nHost: ", target, "\r\n", extra, "\r\n"));
    return proxy::testing::ReadUntil(fd.get(), "\r\n\r\n");
  }

  proxy::testing::TestServer echo_{proxy::testing::EchoHandler};
};

TEST(EgressListenersTest, MacosGetsLoopbackPortsEveryOtherHostUnixSockets) {
  EXPECT_EQ(EgressListenersFor(policy::HostFacts::Os::kMacOs), EgressListeners::kLoopbackPorts);
  EXPECT_EQ(EgressListenersFor(policy::HostFacts::Os::kLinux), EgressListeners::kUnixSockets);
  EXPECT_EQ(EgressListenersFor(policy::HostFacts::Os::kOther), EgressListeners::kUnixSockets);
}

TEST_F(LoopbackEgressTest, ProxiesOnLoopbackPortsAllowRefuseAndReportOverTcp) {
  ASSERT_TRUE(echo_.ok());
  const std::string allowed = absl::StrCat("allowed.test:", echo_.port());
  absl::StatusOr<EgressSummary> started = egress_->Start(Spec("mac", {allowed}));
  ASSERT_TRUE(started.ok()) << started.status();
  const v1::EgressPlan plan = started->plan;
  EXPECT_TRUE(plan.http_socket().empty());
  EXPECT_TRUE(plan.socks_socket().empty());
  ASSERT_NE(plan.http_port(), 0u);
  ASSERT_NE(plan.socks_port(), 0u);
  EXPECT_NE(plan.http_port(), plan.socks_port());
  EXPECT_TRUE(absl::StartsWith(plan.http_proxy_url(), "http://ccsandbox:"));
  EXPECT_TRUE(absl::EndsWith(plan.http_proxy_url(), absl::StrCat("@127.0.0.1:", plan.http_port())))
      << plan.http_proxy_url();
  EXPECT_TRUE(absl::StartsWith(plan.socks_proxy_url(), "socks5h://ccsandbox:"));
  EXPECT_TRUE(
      absl::EndsWith(plan.socks_proxy_url(), absl::StrCat("@127.0.0.1:", plan.socks_port())));
  EXPECT_EQ(egress_->PlanFor("mac")->http_port(), plan.http_port());

  absl::Mutex mu;
  std::vector<v1::SandboxEvent> seen;
  events_.Subscribe("mac", [&](const v1::SandboxEvent& e) {
    absl::MutexLock lock(&mu);
    seen.push_back(e);
  });
  // Another local process on the same loopback, without the session's credentials.
  EXPECT_EQ(Connect(plan.http_port(), allowed, "").rfind("HTTP/1.1 407", 0), 0u);
  EXPECT_EQ(Connect(plan.http_port(), allowed, "Proxy-Authorization: Basic Y2NzYW5kYm94Ong=\r\n")
                .rfind("HTTP/1.1 407", 0),
            0u);
  {  // SOCKS5 offering no authentication: no acceptable method
    const UniqueFd fd = proxy::testing::ConnectTo(plan.socks_port());
    proxy::testing::SendAll(fd.get(), std::string("\x05\x01\x00", 3));
    EXPECT_EQ(proxy::testing::ReadExactly(fd.get(), 2), std::string("\x05\xff", 2));
  }
  const std::string auth = Authorization(plan.http_proxy_url());
  {  // allowed, with the session's credentials: a tunnel to the echo server
    const UniqueFd fd = proxy::testing::ConnectTo(plan.http_port());
    proxy::testing::SendAll(
        fd.get(),
        absl::StrCat("CONNECT ", allowed, " HTTP/1.1\r\nHost: ", allowed, "\r\n", auth, "\r\n"));
    const std::string head = proxy::testing::ReadUntil(fd.get(), "\r\n\r\n");
    ASSERT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
    proxy::testing::SendAll(fd.get(), "ping");
    EXPECT_EQ(proxy::testing::ReadExactly(fd.get(), 4), "ping");
  }
  // Refused by the allowlist: 403 and a network-outbound violation on the session's stream.
  EXPECT_EQ(Connect(plan.http_port(), "evil.test:443", auth).rfind("HTTP/1.1 403", 0), 0u);
  absl::MutexLock lock(&mu);
  auto refused = [&seen]() {
    for (const v1::SandboxEvent& e : seen) {
      if (e.violation().target() == "evil.test:443") return true;
    }
    return false;
  };
  EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&refused), absl::Seconds(10)));
  for (const v1::SandboxEvent& e : seen) EXPECT_EQ(e.violation().action(), "network-outbound");
  EXPECT_EQ(resolver_->lookups("evil.test"), 0);
}

// What a sandboxed command does with the plan's URLs: curl takes the credentials from the
// proxy variable's userinfo, over HTTP and over SOCKS5.
TEST_F(LoopbackEgressTest, CurlUsesTheCredentialedProxyUrlsOfThePlan) {
  proxy::testing::HttpOrigin origin;
  absl::StatusOr<EgressSummary> started =
      egress_->Start(Spec("curl", {absl::StrCat("allowed.test:", origin.port())}));
  ASSERT_TRUE(started.ok()) << started.status();
  auto curl = [&](const std::string& variable, const std::string& url) {
    const std::string command =
        absl::StrCat("env -i PATH=/usr/bin:/bin ", variable, "='", url,
                     "' curl -sS --max-time 20 http://allowed.test:", origin.port(), "/x 2>&1");
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) out.append(buf, n);
    pclose(pipe);
    return out;
  };
  EXPECT_TRUE(absl::StartsWith(curl("http_proxy", started->plan.http_proxy_url()), "GET "));
  EXPECT_TRUE(absl::StartsWith(curl("ALL_PROXY", started->plan.socks_proxy_url()), "GET "));
  EXPECT_EQ(origin.accepted(), 2);
  // Without the userinfo neither proxy lets curl through.
  std::string bare = started->plan.http_proxy_url();
  bare.erase(bare.find("//") + 2, bare.find('@') - bare.find("//") - 1);
  EXPECT_FALSE(absl::StartsWith(curl("http_proxy", bare), "GET ")) << bare;
  EXPECT_EQ(origin.accepted(), 2);
}

TEST_F(LoopbackEgressTest, SessionsHaveTheirOwnPortsAndCredentialsAndStopClosesThem) {
  absl::StatusOr<EgressSummary> a = egress_->Start(Spec("a", {}));
  absl::StatusOr<EgressSummary> b = egress_->Start(Spec("b", {}));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->plan.http_port(), b->plan.http_port());
  // Session b's credentials do not open session a's proxy.
  EXPECT_EQ(Connect(a->plan.http_port(), "evil.test:443", Authorization(b->plan.http_proxy_url()))
                .rfind("HTTP/1.1 407", 0),
            0u);
  egress_->Stop("a");
  const UniqueFd fd = proxy::testing::ConnectTo(a->plan.http_port());
  EXPECT_FALSE(fd.valid());  // nothing listens there any more
}

TEST_F(LoopbackEgressTest, PushIsRefusedItsGatewayIsAUnixSocket) {
  v1::SandboxSpec spec = Spec("p", {});
  spec.mutable_push()->add_repositories("https://github.com/o/r");
  absl::StatusOr<EgressSummary> started = egress_->Start(spec);
  EXPECT_EQ(started.status().code(), absl::StatusCode::kFailedPrecondition) << started.status();
  EXPECT_FALSE(egress_->PlanFor("p").has_value());
}

}  // namespace
}  // namespace ccsandbox::broker
