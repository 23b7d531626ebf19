// Test-only: the fixture of the SessionProxies tests. A session's proxies on an event loop of
// the test's own, names answered by a StaticResolver ("allowed.test", "a.wild.test" and
// "b.test" on 127.0.0.1), an echo server as the upstream, the violations it reports, and the
// client steps the tests share. Never a real outside address.
#ifndef CCSANDBOX_PROXY_SESSION_PROXIES_FIXTURE_H_
#define CCSANDBOX_PROXY_SESSION_PROXIES_FIXTURE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "proxy/event_loop.h"
#include "proxy/proxy_test_support.h"
#include "proxy/session_proxies.h"
#include "proxy/static_resolver.h"

namespace ccsandbox::proxy::testing {

// The violations a session reports, collected from the loop thread.
class Violations {
 public:
  ViolationCallback callback() {
    return [this](const EgressViolation& v) {
      absl::MutexLock lock(&mu_);
      list_.push_back(v);
    };
  }
  std::vector<EgressViolation> list() const {
    absl::MutexLock lock(&mu_);
    return list_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<EgressViolation> list_;
};

class SessionProxiesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(echo_.ok());
    resolver_->Add("allowed.test", {"127.0.0.1"});
    resolver_->Add("a.wild.test", {"127.0.0.1"});
    resolver_->Add("b.test", {"127.0.0.1"});
  }

  std::unique_ptr<SessionProxies> Start(std::vector<std::string> entries,
                                        bool network_enabled = true,
                                        ProxyTimeouts timeouts = ProxyTimeouts(),
                                        Violations* violations = nullptr,
                                        std::optional<ProxyCredentials> credentials = {},
                                        size_t max_connections = 1024);

  // A session allowing `entries`, its options adjusted by `adjust`.
  std::unique_ptr<SessionProxies> StartWith(
      std::vector<std::string> entries, const std::function<void(SessionProxiesOptions&)>& adjust,
      Violations* violations = nullptr);

  // Waits (at most 10 s) until `proxies` has exactly `count` connections open: the count is
  // the loop thread's, which only polling can watch from here.
  // Waits (at most 10 s) until `proxies` has exactly `count` connections open: the count is
  // the loop thread's, which only polling can watch from here.
  ::testing::AssertionResult AwaitOpen(SessionProxies& proxies, size_t count);

  std::string Allowed(uint16_t port) { return absl::StrCat("allowed.test:", port); }

  // Sends a CONNECT and returns the response head.
  std::string Connect(int fd, const std::string& target, const std::string& extra = "") {
    SendAll(fd,
            absl::StrCat("CONNECT ", target, " HTTP/1.1\r\nHost: ", target, "\r\n", extra, "\r\n"));
    return ReadUntil(fd, "\r\n\r\n");
  }

  std::string Exchange(uint16_t proxy_port, const std::string& raw) {
    Fd fd = ConnectTo(proxy_port);
    SendAll(fd.get(), raw);
    return ReadToEof(fd.get());
  }

  EventLoop loop_;
  std::shared_ptr<StaticResolver> resolver_ = std::make_shared<StaticResolver>();
  Violations violations_;
  TestServer echo_{EchoHandler};
};

}  // namespace ccsandbox::proxy::testing

#endif  // CCSANDBOX_PROXY_SESSION_PROXIES_FIXTURE_H_
