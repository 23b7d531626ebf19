// End-to-end tests of a session's proxies over real loopback sockets: a local upstream on
// 127.0.0.1, names answered by StaticResolver, never a real outside address.
#include "proxy/session_proxies.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "policy/egress/allowlist.h"
#include "proxy/connection_budget.h"
#include "proxy/event_loop.h"
#include "proxy/proxy_test_support.h"
#include "proxy/resolver.h"
#include "proxy/socks5_parser.h"
#include "proxy/static_resolver.h"
#include "tests/poll_until.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::proxy {
namespace {

using testing::ConnectTo;
using testing::Fd;
using testing::HeaderValue;
using testing::HttpOrigin;
using testing::ReadExactly;
using testing::ReadToEof;
using testing::ReadUntil;
using testing::SeesClose;
using testing::SendAll;
using testing::Socks5Handshake;
using testing::Socks5Request;
using testing::StatusCode;
using testing::TestServer;

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
                                        size_t max_connections = 1024) {
    absl::StatusOr<policy::EgressAllowlist> list =
        policy::EgressAllowlist::Resolve(network_enabled, entries);
    EXPECT_TRUE(list.ok()) << list.status();
    SessionProxiesOptions options;
    options.session_id = "test-session";
    options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
    options.resolver = resolver_;
    options.on_violation = (violations ? violations : &violations_)->callback();
    options.timeouts = timeouts;
    options.credentials = std::move(credentials);
    options.max_connections = max_connections;
    absl::StatusOr<std::unique_ptr<SessionProxies>> proxies =
        SessionProxies::Start(loop_, std::move(options));
    EXPECT_TRUE(proxies.ok()) << proxies.status();
    return *std::move(proxies);
  }

  // A session allowing `entries`, its options adjusted by `adjust`.
  std::unique_ptr<SessionProxies> StartWith(
      std::vector<std::string> entries, const std::function<void(SessionProxiesOptions&)>& adjust,
      Violations* violations = nullptr) {
    absl::StatusOr<policy::EgressAllowlist> list = policy::EgressAllowlist::Resolve(true, entries);
    EXPECT_TRUE(list.ok()) << list.status();
    SessionProxiesOptions options;
    options.session_id = "test-session";
    options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
    options.resolver = resolver_;
    options.on_violation = (violations ? violations : &violations_)->callback();
    adjust(options);
    absl::StatusOr<std::unique_ptr<SessionProxies>> proxies =
        SessionProxies::Start(loop_, std::move(options));
    EXPECT_TRUE(proxies.ok()) << proxies.status();
    return *std::move(proxies);
  }

  // Waits (at most 10 s) until `proxies` has exactly `count` connections open: the count is
  // the loop thread's, which only polling can watch from here.
  ::testing::AssertionResult AwaitOpen(SessionProxies& proxies, size_t count) {
    return ccsandbox::testing::PollUntil([&] { return proxies.open_connections() == count; },
                                         absl::Seconds(10),
                                         absl::StrCat(count, " open connections"));
  }

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
  TestServer echo_{testing::EchoHandler};
};

TEST_F(SessionProxiesTest, ListensOnTwoLoopbackPorts) {
  auto proxies = Start({});
  EXPECT_NE(proxies->http_port(), 0);
  EXPECT_NE(proxies->socks_port(), 0);
  EXPECT_NE(proxies->http_port(), proxies->socks_port());
  EXPECT_EQ(proxies->http_proxy_url(), absl::StrCat("http://127.0.0.1:", proxies->http_port()));
  EXPECT_EQ(proxies->socks_proxy_url(),
            absl::StrCat("socks5h://127.0.0.1:", proxies->socks_port()));
}

TEST_F(SessionProxiesTest, ConnectToAnAllowedHostTunnels) {
  auto proxies = Start({Allowed(echo_.port())});
  Fd fd = ConnectTo(proxies->http_port());
  const std::string head = Connect(fd.get(), Allowed(echo_.port()));
  EXPECT_EQ(head, "HTTP/1.1 200 Connection established\r\n\r\n");
  ASSERT_TRUE(SendAll(fd.get(), "hello through the tunnel"));
  EXPECT_EQ(ReadExactly(fd.get(), 24), "hello through the tunnel");
  EXPECT_TRUE(violations_.list().empty());
  // Resolved once, connected to what was checked.
  EXPECT_EQ(resolver_->lookups("allowed.test"), 1);
}

TEST_F(SessionProxiesTest, ConnectForwardsBytesSentWithTheHead) {
  auto proxies = Start({Allowed(echo_.port())});
  Fd fd = ConnectTo(proxies->http_port());
  SendAll(fd.get(), absl::StrCat("CONNECT ", Allowed(echo_.port()), " HTTP/1.1\r\n\r\nearly"));
  EXPECT_EQ(ReadUntil(fd.get(), "\r\n\r\n"), "HTTP/1.1 200 Connection established\r\n\r\n");
  EXPECT_EQ(ReadExactly(fd.get(), 5), "early");
}

TEST_F(SessionProxiesTest, HalfCloseIsForwardedBothWays) {
  auto proxies = Start({Allowed(echo_.port())});
  Fd fd = ConnectTo(proxies->http_port());
  ASSERT_EQ(StatusCode(Connect(fd.get(), Allowed(echo_.port()))), 200);
  SendAll(fd.get(), "last words");
  shutdown(fd.get(), SHUT_WR);
  // The echo server sees EOF only if the proxy forwarded it; then it closes, and so do we.
  EXPECT_EQ(ReadToEof(fd.get()), "last words");
}

TEST_F(SessionProxiesTest, AbsoluteFormIsForwardedWithoutHopByHopFields) {
  HttpOrigin origin;
  auto proxies = Start({Allowed(origin.port())});
  const std::string response =
      Exchange(proxies->http_port(),
               absl::StrCat("POST http://allowed.test:", origin.port(), "/path?q=1 HTTP/1.1\r\n",
                            "Host: somewhere-else.test\r\nProxy-Authorization: Basic c2VjcmV0\r\n",
                            "Proxy-Connection: keep-alive\r\nConnection: keep-alive, X-Secret\r\n",
                            "X-Secret: s\r\nUser-Agent: test/1\r\nContent-Length: 4\r\n\r\nbody"));
  EXPECT_EQ(StatusCode(response), 200) << response;
  EXPECT_NE(response.find("POST /path?q=1|body"), std::string::npos) << response;
  ASSERT_EQ(origin.heads().size(), 1u);
  const std::string head = origin.heads()[0];
  const std::string expected_start =
      absl::StrCat("POST /path?q=1 HTTP/1.1\r\nHost: allowed.test:", origin.port(), "\r\n");
  EXPECT_EQ(head.rfind(expected_start, 0), 0u) << head;
  EXPECT_NE(head.find("User-Agent: test/1\r\n"), std::string::npos);
  EXPECT_NE(head.find("Connection: close\r\n"), std::string::npos);
  for (const char* gone :
       {"Proxy-Authorization", "Proxy-Connection", "X-Secret", "keep-alive", "somewhere-else"}) {
    EXPECT_EQ(head.find(gone), std::string::npos) << gone << " in\n" << head;
  }
}

TEST_F(SessionProxiesTest, RefusedHostGets403AndAViolationAndIsNeverResolved) {
  auto proxies = Start({Allowed(echo_.port())});
  Fd fd = ConnectTo(proxies->http_port());
  const std::string response = Connect(fd.get(), "evil.test:443");
  EXPECT_EQ(StatusCode(response), 403) << response;
  EXPECT_EQ(HeaderValue(response, "X-Sandbox-Reason"),
            "host evil.test is not in the session's egress allowlist");
  EXPECT_TRUE(SeesClose(fd.get(), absl::Seconds(5)));
  const std::vector<EgressViolation> violations = violations_.list();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].action, "network-outbound");
  EXPECT_EQ(violations[0].target, "evil.test:443");
  EXPECT_EQ(violations[0].raw, "host evil.test is not in the session's egress allowlist");
  EXPECT_EQ(resolver_->lookups("evil.test"), 0);  // the DNS query itself would leak data
}

TEST_F(SessionProxiesTest, RefusedAbsoluteFormGets403) {
  auto proxies = Start({});
  const std::string response =
      Exchange(proxies->http_port(), "GET http://evil.test/steal?d=1 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusCode(response), 403);
  ASSERT_EQ(violations_.list().size(), 1u);
  EXPECT_EQ(violations_.list()[0].target, "evil.test:80");
}

TEST_F(SessionProxiesTest, AllowedNameOnAnotherPortIsRefused) {
  auto proxies = Start({Allowed(echo_.port())});
  const std::string response =
      Exchange(proxies->http_port(), "CONNECT allowed.test:25 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusCode(response), 403);
  EXPECT_NE(HeaderValue(response, "X-Sandbox-Reason").find("port 25 is not allowed"),
            std::string::npos);
}

TEST_F(SessionProxiesTest, MetadataIsRefusedEvenWhenAWildcardAllowsIt) {
  auto proxies = Start({"*.google.internal", "*.google.internal:8080"});
  for (const char* target : {"metadata.google.internal:80", "METADATA.google.internal.:8080"}) {
    const std::string response =
        Exchange(proxies->http_port(), absl::StrCat("CONNECT ", target, " HTTP/1.1\r\n\r\n"));
    EXPECT_EQ(StatusCode(response), 403) << target;
    EXPECT_NE(HeaderValue(response, "X-Sandbox-Reason").find("permanently denied"),
              std::string::npos);
  }
  // Also through SOCKS5, also as an address.
  Fd fd = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(fd.get()), 0);
  EXPECT_EQ(Socks5Request(fd.get(), 1, 1, "169.254.169.254", 80), kSocks5NotAllowed);
  EXPECT_EQ(resolver_->total_lookups(), 0);
  ASSERT_EQ(violations_.list().size(), 3u);
  EXPECT_EQ(violations_.list()[2].target, "169.254.169.254:80");
}

TEST_F(SessionProxiesTest, NetworkDisabledRefusesEverything) {
  auto proxies = Start({Allowed(echo_.port()), "127.0.0.1:" + std::to_string(echo_.port())},
                       /*network_enabled=*/false);
  for (const std::string& target : {Allowed(echo_.port()), std::string("github.com:443"),
                                    absl::StrCat("127.0.0.1:", echo_.port())}) {
    const std::string response =
        Exchange(proxies->http_port(), absl::StrCat("CONNECT ", target, " HTTP/1.1\r\n\r\n"));
    EXPECT_EQ(StatusCode(response), 403) << target;
    EXPECT_NE(HeaderValue(response, "X-Sandbox-Reason").find("networkEnabled=false"),
              std::string::npos);
  }
  Fd fd = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(fd.get()), 0);
  EXPECT_EQ(Socks5Request(fd.get(), 1, 3, "allowed.test", echo_.port()), kSocks5NotAllowed);
  EXPECT_EQ(violations_.list().size(), 4u);
  EXPECT_EQ(echo_.accepted(), 0);
}

TEST_F(SessionProxiesTest, NameResolvingToLoopbackNeedsTheExactName) {
  auto proxies = Start({absl::StrCat("*.wild.test:", echo_.port())});
  const std::string response =
      Exchange(proxies->http_port(),
               absl::StrCat("CONNECT a.wild.test:", echo_.port(), " HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(StatusCode(response), 403) << response;
  EXPECT_NE(HeaderValue(response, "X-Sandbox-Reason").find("DNS-rebinding"), std::string::npos);
  ASSERT_EQ(violations_.list().size(), 1u);
  EXPECT_EQ(violations_.list()[0].target, absl::StrCat("a.wild.test:", echo_.port()));
  EXPECT_EQ(echo_.accepted(), 0);

  auto exact = Start({absl::StrCat("a.wild.test:", echo_.port())});
  Fd fd = ConnectTo(exact->http_port());
  EXPECT_EQ(StatusCode(Connect(fd.get(), absl::StrCat("a.wild.test:", echo_.port()))), 200);
}

TEST_F(SessionProxiesTest, IpLiteralsOnlyWhenListedExactly) {
  const std::string literal = absl::StrCat("127.0.0.1:", echo_.port());
  auto unlisted = Start({Allowed(echo_.port())});
  EXPECT_EQ(StatusCode(Exchange(unlisted->http_port(),
                                absl::StrCat("CONNECT ", literal, " HTTP/1.1\r\n\r\n"))),
            403);
  auto listed = Start({literal});
  Fd fd = ConnectTo(listed->http_port());
  EXPECT_EQ(StatusCode(Connect(fd.get(), literal)), 200);
  SendAll(fd.get(), "ip");
  EXPECT_EQ(ReadExactly(fd.get(), 2), "ip");
}

TEST_F(SessionProxiesTest, MalformedAndOversizedRequests) {
  auto proxies = Start({Allowed(echo_.port())});
  struct Case {
    std::string raw;
    int status;
  };
  std::string huge = "CONNECT allowed.test:1 HTTP/1.1\r\nX-Big: ";
  huge += std::string(17 * 1024, 'a');
  huge += "\r\n\r\n";
  std::string many = "GET http://allowed.test/ HTTP/1.1\r\n";
  for (int i = 0; i < 101; ++i) many += absl::StrCat("X-", i, ": v\r\n");
  many += "\r\n";
  const Case cases[] = {
      {huge, 431},
      {many, 431},
      {"garbage\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400},
      {"GET https://allowed.test/ HTTP/1.1\r\n\r\n", 400},
      {"CONNECT allowed.test HTTP/1.1\r\n\r\n", 400},
      {"CONNECT allowed.test:443 HTTP/1.1\nHost: x\r\n\r\n", 400},
      {"GET http://allowed.test/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: "
       "chunked\r\n\r\n",
       400},
      {"GET http://user:pw@allowed.test/ HTTP/1.1\r\n\r\n", 400},
      {"GET http://allowed.test/ HTTP/2.0\r\n\r\n", 505},
  };
  for (const Case& c : cases) {
    const std::string response = Exchange(proxies->http_port(), c.raw);
    EXPECT_EQ(StatusCode(response), c.status) << c.raw.substr(0, 80) << "\n-> " << response;
    EXPECT_FALSE(HeaderValue(response, "X-Sandbox-Reason").empty());
  }
  EXPECT_TRUE(violations_.list().empty());  // malformed is not an egress attempt
  EXPECT_EQ(echo_.accepted(), 0);
}

TEST_F(SessionProxiesTest, UpstreamFailuresAre502And504) {
  const uint16_t closed = testing::UnusedPort();
  resolver_->Add("slow.test", {"127.0.0.1"}, absl::Seconds(3));
  ProxyTimeouts timeouts;
  timeouts.connect = absl::Milliseconds(300);
  auto proxies = Start({Allowed(closed), "slow.test", "unknown.test"}, true, timeouts);
  std::string response = Exchange(proxies->http_port(),
                                  absl::StrCat("CONNECT ", Allowed(closed), " HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(StatusCode(response), 502) << response;
  EXPECT_NE(HeaderValue(response, "X-Sandbox-Reason").find("refused"), std::string::npos)
      << response;
  response = Exchange(proxies->http_port(), "GET http://unknown.test/ HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusCode(response), 502) << response;
  const absl::Time start = absl::Now();
  response = Exchange(proxies->http_port(), "CONNECT slow.test:443 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusCode(response), 504) << response;
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_TRUE(violations_.list().empty());

  Fd fd = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(fd.get()), 0);
  EXPECT_EQ(Socks5Request(fd.get(), 1, 3, "allowed.test", closed), kSocks5ConnectionRefused);
  fd = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(fd.get()), 0);
  EXPECT_EQ(Socks5Request(fd.get(), 1, 3, "slow.test", 443), kSocks5HostUnreachable);
}

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

TEST_F(SessionProxiesTest, Socks5ConnectByDomainIpv4AndIpv6) {
  auto proxies = Start({Allowed(echo_.port()), absl::StrCat("127.0.0.1:", echo_.port())});
  Fd by_name = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(by_name.get()), 0);
  ASSERT_EQ(Socks5Request(by_name.get(), 1, 3, "allowed.test", echo_.port()), kSocks5Succeeded);
  SendAll(by_name.get(), "via socks");
  EXPECT_EQ(ReadExactly(by_name.get(), 9), "via socks");

  Fd by_ip = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(by_ip.get()), 0);
  ASSERT_EQ(Socks5Request(by_ip.get(), 1, 1, "127.0.0.1", echo_.port()), kSocks5Succeeded);
  SendAll(by_ip.get(), "v4");
  EXPECT_EQ(ReadExactly(by_ip.get(), 2), "v4");

  // An IPv4-mapped IPv6 address is the IPv4 address it carries.
  Fd mapped = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(mapped.get()), 0);
  ASSERT_EQ(Socks5Request(mapped.get(), 1, 4, "::ffff:127.0.0.1", echo_.port()), kSocks5Succeeded);
  SendAll(mapped.get(), "mapped");
  EXPECT_EQ(ReadExactly(mapped.get(), 6), "mapped");

  Fd unlisted = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(unlisted.get()), 0);
  EXPECT_EQ(Socks5Request(unlisted.get(), 1, 1, "127.0.0.2", echo_.port()), kSocks5NotAllowed);
  ASSERT_EQ(violations_.list().size(), 1u);
  EXPECT_EQ(violations_.list()[0].target, absl::StrCat("127.0.0.2:", echo_.port()));

  TestServer echo6(testing::EchoHandler, /*ipv6=*/true);
  if (!echo6.ok()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no IPv6 loopback here");
  auto v6 = Start({absl::StrCat("[::1]:", echo6.port())});
  Fd by_v6 = ConnectTo(v6->socks_port());
  ASSERT_EQ(Socks5Handshake(by_v6.get()), 0);
  ASSERT_EQ(Socks5Request(by_v6.get(), 1, 4, "::1", echo6.port()), kSocks5Succeeded);
  SendAll(by_v6.get(), "v6");
  EXPECT_EQ(ReadExactly(by_v6.get(), 2), "v6");
  Fd http_v6 = ConnectTo(v6->http_port());
  EXPECT_EQ(StatusCode(Connect(http_v6.get(), absl::StrCat("[::1]:", echo6.port()))), 200);
}

TEST_F(SessionProxiesTest, Socks5BindAndUdpAssociateAreNotSupported) {
  auto proxies = Start({Allowed(echo_.port())});
  for (uint8_t command : {kSocks5CommandBind, kSocks5CommandUdpAssociate}) {
    Fd fd = ConnectTo(proxies->socks_port());
    ASSERT_EQ(Socks5Handshake(fd.get()), 0);
    EXPECT_EQ(Socks5Request(fd.get(), command, 3, "allowed.test", echo_.port()),
              kSocks5CommandNotSupported);
    EXPECT_TRUE(SeesClose(fd.get(), absl::Seconds(5)));
  }
  const std::vector<EgressViolation> violations = violations_.list();
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_NE(violations[0].raw.find("BIND"), std::string::npos);
  EXPECT_NE(violations[1].raw.find("UDP ASSOCIATE"), std::string::npos);
  EXPECT_EQ(echo_.accepted(), 0);
}

TEST_F(SessionProxiesTest, Socks5MalformedRequests) {
  auto proxies = Start({Allowed(echo_.port())});
  Fd fd = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(fd.get()), 0);
  SendAll(fd.get(), std::string("\x05\x01\x00\x09\x01\x02", 6));
  const std::string reply = ReadExactly(fd.get(), 10);
  ASSERT_EQ(reply.size(), 10u);
  EXPECT_EQ(reply[1], kSocks5AddressTypeNotSupported);
  Fd socks4 = ConnectTo(proxies->socks_port());
  SendAll(socks4.get(), std::string("\x04\x01\x00\x50\x7f\x00\x00\x01\x00", 9));
  EXPECT_TRUE(SeesClose(socks4.get(), absl::Seconds(5)));
  Fd no_method = ConnectTo(proxies->socks_port());
  SendAll(no_method.get(), std::string("\x05\x01\x80", 3));
  EXPECT_EQ(ReadExactly(no_method.get(), 2), std::string("\x05\xff", 2));
}

TEST_F(SessionProxiesTest, CredentialsAreIgnoredUnlessTheSessionHasThem) {
  auto open = Start({Allowed(echo_.port())});
  Fd any = ConnectTo(open->socks_port());
  ASSERT_EQ(Socks5Handshake(any.get(), /*with_userpass=*/true, "anyone", "anything"), 0);
  EXPECT_EQ(Socks5Request(any.get(), 1, 3, "allowed.test", echo_.port()), kSocks5Succeeded);

  auto locked = Start({Allowed(echo_.port())}, true, ProxyTimeouts(), nullptr,
                      ProxyCredentials{"sandbox", "s3cret"});
  Fd no_auth = ConnectTo(locked->socks_port());
  EXPECT_EQ(Socks5Handshake(no_auth.get()), 0xff);
  Fd wrong = ConnectTo(locked->socks_port());
  EXPECT_EQ(Socks5Handshake(wrong.get(), true, "sandbox", "guess"), 1);
  Fd right = ConnectTo(locked->socks_port());
  ASSERT_EQ(Socks5Handshake(right.get(), true, "sandbox", "s3cret"), 0);
  EXPECT_EQ(Socks5Request(right.get(), 1, 3, "allowed.test", echo_.port()), kSocks5Succeeded);

  const std::string connect = absl::StrCat("CONNECT ", Allowed(echo_.port()), " HTTP/1.1\r\n");
  std::string response = Exchange(locked->http_port(), connect + "\r\n");
  EXPECT_EQ(StatusCode(response), 407);
  EXPECT_EQ(HeaderValue(response, "Proxy-Authenticate"), "Basic realm=\"sandbox egress\"");
  response = Exchange(locked->http_port(),
                      connect + "Proxy-Authorization: Basic c2FuZGJveDpndWVzcw==\r\n\r\n");
  EXPECT_EQ(StatusCode(response), 407);
  Fd http = ConnectTo(locked->http_port());
  SendAll(http.get(), connect + "Proxy-Authorization: Basic c2FuZGJveDpzM2NyZXQ=\r\n\r\n");
  EXPECT_EQ(StatusCode(ReadUntil(http.get(), "\r\n\r\n")), 200);
}

TEST_F(SessionProxiesTest, TwoSessionsDoNotSeeEachOthersDecisions) {
  Violations a_violations;
  Violations b_violations;
  auto a = Start({Allowed(echo_.port())}, true, ProxyTimeouts(), &a_violations);
  auto b = Start({absl::StrCat("b.test:", echo_.port())}, true, ProxyTimeouts(), &b_violations);
  EXPECT_NE(a->http_port(), b->http_port());
  EXPECT_NE(a->socks_port(), b->socks_port());
  const std::string to_a = absl::StrCat("CONNECT ", Allowed(echo_.port()), " HTTP/1.1\r\n\r\n");
  const std::string to_b = absl::StrCat("CONNECT b.test:", echo_.port(), " HTTP/1.1\r\n\r\n");
  Fd a_ok = ConnectTo(a->http_port());
  SendAll(a_ok.get(), to_a);
  EXPECT_EQ(StatusCode(ReadUntil(a_ok.get(), "\r\n\r\n")), 200);
  Fd b_ok = ConnectTo(b->http_port());
  SendAll(b_ok.get(), to_b);
  EXPECT_EQ(StatusCode(ReadUntil(b_ok.get(), "\r\n\r\n")), 200);
  EXPECT_EQ(StatusCode(Exchange(a->http_port(), to_b)), 403);
  EXPECT_EQ(StatusCode(Exchange(b->http_port(), to_a)), 403);
  ASSERT_EQ(a_violations.list().size(), 1u);
  ASSERT_EQ(b_violations.list().size(), 1u);
  EXPECT_EQ(a_violations.list()[0].target, absl::StrCat("b.test:", echo_.port()));
  EXPECT_EQ(b_violations.list()[0].target, absl::StrCat("allowed.test:", echo_.port()));
  // Stopping one leaves the other's tunnel alone.
  a->Stop();
  EXPECT_TRUE(SeesClose(a_ok.get(), absl::Seconds(5)));
  SendAll(b_ok.get(), "still here");
  EXPECT_EQ(ReadExactly(b_ok.get(), 10), "still here");
}

TEST_F(SessionProxiesTest, StopClosesListenersAndEveryTunnel) {
  auto proxies = Start({Allowed(echo_.port())});
  const uint16_t http_port = proxies->http_port();
  const uint16_t socks_port = proxies->socks_port();
  std::vector<Fd> tunnels;
  for (int i = 0; i < 5; ++i) {
    tunnels.push_back(ConnectTo(http_port));
    ASSERT_EQ(StatusCode(Connect(tunnels.back().get(), Allowed(echo_.port()))), 200);
  }
  Fd negotiating = ConnectTo(socks_port);
  SendAll(negotiating.get(), std::string("\x05", 1));
  Fd half_head = ConnectTo(http_port);
  SendAll(half_head.get(), "CONNECT allowed");
  EXPECT_TRUE(AwaitOpen(*proxies, 7));
  proxies->Stop();
  EXPECT_EQ(proxies->open_connections(), 0u);
  for (Fd& fd : tunnels) EXPECT_TRUE(SeesClose(fd.get(), absl::Seconds(5)));
  EXPECT_TRUE(SeesClose(negotiating.get(), absl::Seconds(5)));
  EXPECT_TRUE(SeesClose(half_head.get(), absl::Seconds(5)));
  EXPECT_FALSE(ConnectTo(http_port).valid());
  EXPECT_FALSE(ConnectTo(socks_port).valid());
  proxies->Stop();  // idempotent
}

TEST_F(SessionProxiesTest, OverItsConnectionLimitASessionIsRefusedWithA503AndAViolation) {
  auto proxies = Start({Allowed(echo_.port())}, true, ProxyTimeouts(), nullptr, std::nullopt,
                       /*max_connections=*/2);
  Fd one = ConnectTo(proxies->http_port());
  Fd two = ConnectTo(proxies->socks_port());
  ASSERT_EQ(StatusCode(Connect(one.get(), Allowed(echo_.port()))), 200);
  ASSERT_EQ(Socks5Handshake(two.get()), 0);
  ASSERT_EQ(Socks5Request(two.get(), 1, 3, "allowed.test", echo_.port()), kSocks5Succeeded);

  Fd three = ConnectTo(proxies->http_port());
  const std::string refused = Connect(three.get(), Allowed(echo_.port()));
  EXPECT_EQ(StatusCode(refused), 503) << refused;
  EXPECT_NE(HeaderValue(refused, "X-Sandbox-Reason").find("connection limit"), std::string::npos)
      << refused;
  Fd four = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(four.get()), 0);
  EXPECT_EQ(Socks5Request(four.get(), 1, 3, "allowed.test", echo_.port()), kSocks5GeneralFailure);
  // The policy still speaks first: a refused host is a 403 over the limit too.
  Fd five = ConnectTo(proxies->http_port());
  EXPECT_EQ(StatusCode(Connect(five.get(), "b.test:443")), 403);
  std::vector<EgressViolation> seen = violations_.list();
  ASSERT_EQ(seen.size(), 3u);
  for (int i : {0, 1}) {
    EXPECT_EQ(seen[i].target, Allowed(echo_.port()));
    EXPECT_NE(seen[i].raw.find("connection limit"), std::string::npos) << seen[i].raw;
  }
  EXPECT_EQ(seen[2].target, "b.test:443");

  // A closed tunnel frees its place.
  one = Fd();
  ASSERT_TRUE(AwaitOpen(*proxies, 1));
  Fd six = ConnectTo(proxies->http_port());
  EXPECT_EQ(StatusCode(Connect(six.get(), Allowed(echo_.port()))), 200);
  ASSERT_TRUE(SendAll(six.get(), "ping"));
  EXPECT_EQ(ReadExactly(six.get(), 4), "ping");
}

TEST_F(SessionProxiesTest, RefusalsAreBoundedTooAndTheRestIsClosedUnread) {
  auto proxies = StartWith({Allowed(echo_.port())}, [](SessionProxiesOptions& o) {
    o.max_connections = 1;
    o.max_refusing = 2;
  });
  Fd tunnel = ConnectTo(proxies->http_port());
  ASSERT_EQ(StatusCode(Connect(tunnel.get(), Allowed(echo_.port()))), 200);
  // Two refusals wait for their request heads (slow clients); a third finds no room at all.
  Fd slow1 = ConnectTo(proxies->http_port());
  Fd slow2 = ConnectTo(proxies->http_port());
  ASSERT_TRUE(AwaitOpen(*proxies, 3));
  Fd closed = ConnectTo(proxies->http_port());
  EXPECT_TRUE(SeesClose(closed.get(), absl::Seconds(5)));
  EXPECT_FALSE(SeesClose(slow1.get(), absl::Milliseconds(100)));
  EXPECT_EQ(StatusCode(Connect(slow1.get(), Allowed(echo_.port()))), 503);
}

TEST_F(SessionProxiesTest, ASharedBudgetCapsEverySessionTogether) {
  auto budget = std::make_shared<ConnectionBudget>(2);
  Violations b_violations;
  auto a = StartWith({Allowed(echo_.port())}, [&](SessionProxiesOptions& o) {
    o.budget = budget;
    o.guaranteed_connections = 0;
  });
  auto b = StartWith(
      {Allowed(echo_.port())},
      [&](SessionProxiesOptions& o) {
        o.budget = budget;
        o.guaranteed_connections = 0;
      },
      &b_violations);
  Fd a1 = ConnectTo(a->http_port());
  Fd a2 = ConnectTo(a->http_port());
  ASSERT_EQ(StatusCode(Connect(a1.get(), Allowed(echo_.port()))), 200);
  ASSERT_EQ(StatusCode(Connect(a2.get(), Allowed(echo_.port()))), 200);
  auto open = [&] { return loop_.RunSync([&] { return budget->open(); }); };
  EXPECT_EQ(open(), 2u);
  Fd b1 = ConnectTo(b->http_port());
  const std::string refused = Connect(b1.get(), Allowed(echo_.port()));
  EXPECT_EQ(StatusCode(refused), 503) << refused;
  EXPECT_NE(HeaderValue(refused, "X-Sandbox-Reason").find("all sessions"), std::string::npos)
      << refused;
  ASSERT_EQ(b_violations.list().size(), 1u);
  a->Stop();  // its tunnels go, and with them their share
  EXPECT_EQ(open(), 0u);
  Fd b2 = ConnectTo(b->http_port());
  EXPECT_EQ(StatusCode(Connect(b2.get(), Allowed(echo_.port()))), 200);
}

TEST_F(SessionProxiesTest, ALightSessionIsServedWhenOthersHaveSpentTheBudget) {
  auto budget = std::make_shared<ConnectionBudget>(1);
  auto greedy = StartWith({Allowed(echo_.port())}, [&](SessionProxiesOptions& o) {
    o.budget = budget;
    o.guaranteed_connections = 1;
  });
  auto light = StartWith({Allowed(echo_.port())}, [&](SessionProxiesOptions& o) {
    o.budget = budget;
    o.guaranteed_connections = 1;
  });
  Fd g1 = ConnectTo(greedy->http_port());
  ASSERT_EQ(StatusCode(Connect(g1.get(), Allowed(echo_.port()))), 200);
  Fd g2 = ConnectTo(greedy->http_port());
  EXPECT_EQ(StatusCode(Connect(g2.get(), Allowed(echo_.port()))), 503);  // budget spent
  Fd l1 = ConnectTo(light->http_port());
  EXPECT_EQ(StatusCode(Connect(l1.get(), Allowed(echo_.port()))), 200);  // its guaranteed one
  Fd l2 = ConnectTo(light->http_port());
  EXPECT_EQ(StatusCode(Connect(l2.get(), Allowed(echo_.port()))), 503);
}

TEST(ConnectionBudget, DefaultKeepsAReserveOfTheDescriptorLimit) {
  EXPECT_EQ(DefaultConnectionBudget(1024), 64u);  // everything is reserve: the floor
  EXPECT_EQ(DefaultConnectionBudget(20000), (20000u - 5000u) / 6);
  EXPECT_EQ(DefaultConnectionBudget(4096), (4096u - 1024u) / 6);
}

TEST_F(SessionProxiesTest, BulkTransferIsExactThroughBothProxies) {
  TestServer source(testing::SourceHandler);
  auto proxies = Start({Allowed(source.port())});
  constexpr uint64_t kBytes = 32ull << 20;
  std::string length;
  for (int shift = 56; shift >= 0; shift -= 8) length.push_back(static_cast<char>(kBytes >> shift));
  auto check = [&](int fd) {
    ASSERT_TRUE(SendAll(fd, length));
    const std::string data = ReadToEof(fd);
    ASSERT_EQ(data.size(), kBytes);
    for (uint64_t i = 0; i < kBytes; i += 4093) {
      ASSERT_EQ(data[i], testing::PatternByte(i)) << i;
    }
  };
  Fd http = ConnectTo(proxies->http_port());
  ASSERT_EQ(StatusCode(Connect(http.get(), Allowed(source.port()))), 200);
  check(http.get());
  Fd socks = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(socks.get()), 0);
  ASSERT_EQ(Socks5Request(socks.get(), 1, 3, "allowed.test", source.port()), kSocks5Succeeded);
  check(socks.get());
}

TEST_F(SessionProxiesTest, BulkBothWaysIsExactAndDoesNotStarveOtherTunnels) {
  auto proxies = Start({Allowed(echo_.port())});
  Fd bulk = ConnectTo(proxies->http_port());
  ASSERT_EQ(StatusCode(Connect(bulk.get(), Allowed(echo_.port()))), 200);
  Fd other = ConnectTo(proxies->socks_port());
  ASSERT_EQ(Socks5Handshake(other.get()), 0);
  ASSERT_EQ(Socks5Request(other.get(), 1, 3, "allowed.test", echo_.port()), kSocks5Succeeded);
  // Up to the echo server and back: both directions of one tunnel turn bulk and stay busy.
  constexpr uint64_t kBytes = 128ull << 20;
  std::thread writer([&] {
    std::string chunk(256 * 1024, '\0');
    for (uint64_t sent = 0; sent < kBytes; sent += chunk.size()) {
      for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = testing::PatternByte(sent + i);
      if (!SendAll(bulk.get(), chunk)) return;
    }
    shutdown(bulk.get(), SHUT_WR);
  });
  std::atomic<bool> bulk_done{false};
  std::string echoed;
  std::thread reader([&] {
    echoed = ReadToEof(bulk.get(), kBytes + 1);
    bulk_done = true;
  });
  // Meanwhile the other tunnel on the same loop keeps answering.
  absl::Duration slowest;
  int round_trips = 0;
  bool answered = true;
  while (!bulk_done && answered) {
    const absl::Time start = absl::Now();
    answered = SendAll(other.get(), "ping") && ReadExactly(other.get(), 4) == "ping";
    slowest = std::max(slowest, absl::Now() - start);
    ++round_trips;
  }
  writer.join();
  reader.join();
  EXPECT_TRUE(answered);
  EXPECT_LT(slowest, absl::Seconds(2)) << round_trips << " round trips";
  ASSERT_EQ(echoed.size(), kBytes);
  for (uint64_t i = 0; i < kBytes; i += 4093) {
    ASSERT_EQ(echoed[i], testing::PatternByte(i)) << i;
  }
}

TEST_F(SessionProxiesTest, ManyConcurrentTunnelsOnOneLoop) {
  auto proxies = Start({Allowed(echo_.port())});
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int t = 0; t < 16; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        Fd fd = ConnectTo(t % 2 ? proxies->http_port() : proxies->socks_port());
        bool good;
        if (t % 2) {
          good = StatusCode(Connect(fd.get(), Allowed(echo_.port()))) == 200;
        } else {
          good = Socks5Handshake(fd.get()) == 0 &&
                 Socks5Request(fd.get(), 1, 3, "allowed.test", echo_.port()) == 0;
        }
        const std::string message = absl::StrCat("client ", t, " round ", i);
        good =
            good && SendAll(fd.get(), message) && ReadExactly(fd.get(), message.size()) == message;
        if (good) ++ok;
      }
    });
  }
  for (std::thread& c : clients) c.join();
  EXPECT_EQ(ok.load(), 16 * 20);
  EXPECT_TRUE(AwaitOpen(*proxies, 0));
}

TEST_F(SessionProxiesTest, ServesListeningSocketsItIsGiven) {
  // As the launcher would create them inside the sandbox's network namespace.
  auto listener = [] {
    Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(a);
    bind(fd.get(), reinterpret_cast<sockaddr*>(&a), length);
    listen(fd.get(), 16);
    getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &length);
    return std::make_pair(std::move(fd), ntohs(a.sin_port));
  };
  auto [http_fd, http_port] = listener();
  auto [socks_fd, socks_port] = listener();
  const int http_fd_number = http_fd.get();
  absl::StatusOr<policy::EgressAllowlist> list =
      policy::EgressAllowlist::Resolve(true, std::vector<std::string>{Allowed(echo_.port())});
  SessionProxiesOptions options;
  options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
  options.resolver = resolver_;
  options.http_listen_fd = std::move(http_fd);
  options.socks_listen_fd = std::move(socks_fd);
  absl::StatusOr<std::unique_ptr<SessionProxies>> proxies =
      SessionProxies::Start(loop_, std::move(options));
  ASSERT_TRUE(proxies.ok()) << proxies.status();
  EXPECT_EQ((*proxies)->http_port(), http_port);
  EXPECT_EQ((*proxies)->socks_port(), socks_port);
  Fd http = ConnectTo(http_port);
  EXPECT_EQ(StatusCode(Connect(http.get(), Allowed(echo_.port()))), 200);
  Fd socks = ConnectTo(socks_port);
  ASSERT_EQ(Socks5Handshake(socks.get()), 0);
  EXPECT_EQ(Socks5Request(socks.get(), 1, 3, "allowed.test", echo_.port()), kSocks5Succeeded);
  (*proxies)->Stop();
  EXPECT_EQ(fcntl(http_fd_number, F_GETFD), -1);  // closed with the session
  EXPECT_FALSE(ConnectTo(http_port).valid());
}

TEST_F(SessionProxiesTest, ServesUnixListenersItIsGiven) {
  // As the broker does for a Linux sandbox: the bridge inside connects to these sockets.
  char dir_template[] = "/tmp/proxy-unix-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  auto unix_listener = [](const std::string& path) {
    Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
    EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return fd;  // not listening yet: the proxy calls listen()
  };
  auto unix_connect = [](const std::string& path) {
    Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
    EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return fd;
  };
  absl::StatusOr<policy::EgressAllowlist> list =
      policy::EgressAllowlist::Resolve(true, std::vector<std::string>{Allowed(echo_.port())});
  SessionProxiesOptions options;
  options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
  options.resolver = resolver_;
  options.on_violation = violations_.callback();
  options.http_listen_fd = unix_listener(dir + "/http.sock");
  options.socks_listen_fd = unix_listener(dir + "/socks.sock");
  absl::StatusOr<std::unique_ptr<SessionProxies>> proxies =
      SessionProxies::Start(loop_, std::move(options));
  ASSERT_TRUE(proxies.ok()) << proxies.status();
  EXPECT_EQ((*proxies)->http_port(), 0);

  Fd http = unix_connect(dir + "/http.sock");
  ASSERT_EQ(StatusCode(Connect(http.get(), Allowed(echo_.port()))), 200);
  const std::string payload(256 * 1024, 'x');
  std::thread writer([&] { SendAll(http.get(), payload); });
  EXPECT_EQ(ReadExactly(http.get(), payload.size()), payload);
  writer.join();
  Fd refused = unix_connect(dir + "/http.sock");
  EXPECT_EQ(StatusCode(Connect(refused.get(), "other.test:443")), 403);
  Fd socks = unix_connect(dir + "/socks.sock");
  ASSERT_EQ(Socks5Handshake(socks.get()), 0);
  EXPECT_EQ(Socks5Request(socks.get(), 1, 3, "allowed.test", echo_.port()), kSocks5Succeeded);
  ASSERT_TRUE(SendAll(socks.get(), "ping"));
  EXPECT_EQ(ReadExactly(socks.get(), 4), "ping");
  (*proxies)->Stop();
  ASSERT_EQ(violations_.list().size(), 1u);
  EXPECT_EQ(violations_.list()[0].target, "other.test:443");
  std::filesystem::remove_all(dir);
}

TEST_F(SessionProxiesTest, RefusesAGivenDescriptorThatIsNotATcpListenerAndClosesIt) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  Fd pipe_write(pipe_fds[1]);
  absl::StatusOr<policy::EgressAllowlist> list =
      policy::EgressAllowlist::Resolve(true, std::vector<std::string>{});
  SessionProxiesOptions options;
  options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
  options.resolver = resolver_;
  options.http_listen_fd = Fd(pipe_fds[0]);
  EXPECT_EQ(SessionProxies::Start(loop_, std::move(options)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fcntl(pipe_fds[0], F_GETFD), -1);
}

TEST(SessionProxiesStart, NeedsAnAllowlistAndAResolver) {
  EventLoop loop;
  EXPECT_EQ(SessionProxies::Start(loop, SessionProxiesOptions()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ccsandbox::proxy
