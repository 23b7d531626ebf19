#include "broker/session_egress.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
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

}  // namespace
}  // namespace ccsandbox::broker
