// A session's SOCKS5 proxy end to end over loopback: CONNECT by domain, IPv4 and IPv6, the
// commands it does not support, and malformed requests.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proxy/proxy_test_support.h"
#include "proxy/session_proxies.h"
#include "proxy/session_proxies_fixture.h"
#include "proxy/socks5_parser.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::proxy {
namespace {

using testing::ConnectTo;
using testing::EchoHandler;
using testing::Fd;
using testing::ReadExactly;
using testing::SeesClose;
using testing::SendAll;
using testing::SessionProxiesTest;
using testing::Socks5Handshake;
using testing::Socks5Request;
using testing::StatusCode;
using testing::TestServer;

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

}  // namespace
}  // namespace ccsandbox::proxy
