// A session's HTTP proxy end to end over loopback: CONNECT tunnels (bytes sent with the head,
// half-close), absolute-form requests forwarded without hop-by-hop fields, malformed and
// oversized requests, and upstream failures answered 502 and 504. Fixture:
// proxy/session_proxies_fixture.h.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proxy/proxy_test_support.h"
#include "proxy/session_proxies.h"
#include "proxy/session_proxies_fixture.h"
#include "proxy/socks5_parser.h"

namespace ccsandbox::proxy {
namespace {

using testing::ConnectTo;
using testing::Fd;
using testing::HeaderValue;
using testing::HttpOrigin;
using testing::ReadExactly;
using testing::ReadToEof;
using testing::ReadUntil;
using testing::SendAll;
using testing::SessionProxiesTest;
using testing::Socks5Handshake;
using testing::Socks5Request;
using testing::StatusCode;
using testing::UnusedPort;

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

}  // namespace
}  // namespace ccsandbox::proxy
