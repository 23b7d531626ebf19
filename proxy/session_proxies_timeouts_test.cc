// A session's proxies over time: the handshake timeout (408), idle and half-open tunnels
// closed, Stop during a slow name resolution, and the system resolver answering from
// /etc/hosts.
#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "policy/egress/allowlist.h"
#include "proxy/proxy_test_support.h"
#include "proxy/resolver.h"
#include "proxy/session_proxies.h"
#include "proxy/session_proxies_fixture.h"
#include "tests/poll_until.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::proxy {
namespace {

using testing::ConnectTo;
using testing::Fd;
using testing::ReadExactly;
using testing::ReadToEof;
using testing::SeesClose;
using testing::SendAll;
using testing::SessionProxiesTest;
using testing::StatusCode;
using testing::TestServer;

TEST_F(SessionProxiesTest, HandshakeTimeoutAnswers408AndCloses) {
  ProxyTimeouts timeouts;
  timeouts.handshake = absl::Milliseconds(200);
  auto proxies = Start({}, true, timeouts);
  Fd http = ConnectTo(proxies->http_port());
  SendAll(http.get(), "CONNECT allowed.test:443 HTTP/1.1\r\n");  // never finished
  const std::string response = ReadToEof(http.get());
  EXPECT_EQ(StatusCode(response), 408) << response;
  Fd socks = ConnectTo(proxies->socks_port());
  SendAll(socks.get(), std::string("\x05", 1));
  EXPECT_TRUE(SeesClose(socks.get(), absl::Seconds(5)));
}

TEST_F(SessionProxiesTest, IdleAndHalfOpenTunnelsAreClosed) {
  ProxyTimeouts timeouts;
  timeouts.idle = absl::Milliseconds(300);
  timeouts.half_open = absl::Milliseconds(300);
  auto proxies = Start({Allowed(echo_.port())}, true, timeouts);
  Fd fd = ConnectTo(proxies->http_port());
  ASSERT_EQ(StatusCode(Connect(fd.get(), Allowed(echo_.port()))), 200);
  SendAll(fd.get(), "x");
  EXPECT_EQ(ReadExactly(fd.get(), 1), "x");
  const absl::Time start = absl::Now();
  EXPECT_TRUE(SeesClose(fd.get(), absl::Seconds(5)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
}

TEST_F(SessionProxiesTest, HalfOpenTunnelIsClosedWhenTheOtherSideGoesQuiet) {
  // An upstream that reads to EOF and then neither answers nor closes.
  TestServer silent([](int fd) {
    testing::ReadToEof(fd);
    // Not synchronisation: the quiet upstream under test, holding the connection open.
    absl::SleepFor(absl::Milliseconds(1500));
  });
  ProxyTimeouts timeouts;
  timeouts.half_open = absl::Milliseconds(300);
  auto proxies = Start({Allowed(silent.port())}, true, timeouts);
  Fd fd = ConnectTo(proxies->http_port());
  ASSERT_EQ(StatusCode(Connect(fd.get(), Allowed(silent.port()))), 200);
  SendAll(fd.get(), "request");
  shutdown(fd.get(), SHUT_WR);
  const absl::Time start = absl::Now();
  EXPECT_TRUE(SeesClose(fd.get(), absl::Seconds(4)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
}

TEST_F(SessionProxiesTest, StopDuringASlowResolutionReturnsAtOnce) {
  resolver_->Add("slow.test", {"127.0.0.1"}, absl::Seconds(3));
  auto proxies = Start({absl::StrCat("slow.test:", echo_.port())});
  Fd fd = ConnectTo(proxies->http_port());
  SendAll(fd.get(), absl::StrCat("CONNECT slow.test:", echo_.port(), " HTTP/1.1\r\n\r\n"));
  ASSERT_TRUE(ccsandbox::testing::PollUntil([&] { return resolver_->lookups("slow.test") == 1; },
                                            absl::Seconds(10), "the resolution to start"));
  EXPECT_EQ(proxies->open_connections(), 1u);
  const absl::Time start = absl::Now();
  proxies->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  EXPECT_TRUE(SeesClose(fd.get(), absl::Seconds(5)));
  EXPECT_EQ(echo_.accepted(), 0);
}

// True when /etc/hosts maps "localhost" to 127.0.0.1, where the echo server listens.
bool HostsFileHasLocalhost() {
  std::ifstream hosts("/etc/hosts");
  std::string line;
  while (std::getline(hosts, line)) {
    std::vector<std::string> words =
        absl::StrSplit(line.substr(0, line.find('#')), absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.size() >= 2 && words[0] == "127.0.0.1" &&
        std::find(words.begin() + 1, words.end(), "localhost") != words.end()) {
      return true;
    }
  }
  return false;
}

TEST_F(SessionProxiesTest, SystemResolverAnswersFromTheHostsFile) {
  // localhost comes from /etc/hosts: no DNS query leaves the machine.
  if (!HostsFileHasLocalhost()) {
    CCSANDBOX_SKIP_OR_FAIL_IN_CI("/etc/hosts has no '127.0.0.1 localhost' line");
  }
  SessionProxiesOptions options;
  absl::StatusOr<policy::EgressAllowlist> list = policy::EgressAllowlist::Resolve(
      true, std::vector<std::string>{absl::StrCat("localhost:", echo_.port())});
  ASSERT_TRUE(list.ok());
  options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
  options.resolver = std::make_shared<SystemResolver>(1);
  absl::StatusOr<std::unique_ptr<SessionProxies>> proxies =
      SessionProxies::Start(loop_, std::move(options));
  ASSERT_TRUE(proxies.ok());
  Fd fd = ConnectTo((*proxies)->http_port());
  const std::string response = Connect(fd.get(), absl::StrCat("localhost:", echo_.port()));
  ASSERT_EQ(StatusCode(response), 200) << response;
  SendAll(fd.get(), "sys");
  EXPECT_EQ(ReadExactly(fd.get(), 3), "sys");
  (*proxies)->Stop();
}

}  // namespace
}  // namespace ccsandbox::proxy
