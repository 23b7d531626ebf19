// A session's proxies under load: the per-session connection limit (503 and a violation,
// refusals bounded too), a connection budget shared by every session, exact bulk transfers
// through both proxies, and many concurrent tunnels on one loop.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proxy/connection_budget.h"
#include "proxy/proxy_test_support.h"
#include "proxy/session_proxies.h"
#include "proxy/session_proxies_fixture.h"
#include "proxy/socks5_parser.h"

namespace ccsandbox::proxy {
namespace {

using testing::ConnectTo;
using testing::Fd;
using testing::HeaderValue;
using testing::PatternByte;
using testing::ReadExactly;
using testing::ReadToEof;
using testing::SeesClose;
using testing::SendAll;
using testing::SessionProxiesTest;
using testing::Socks5Handshake;
using testing::Socks5Request;
using testing::SourceHandler;
using testing::StatusCode;
using testing::TestServer;
using testing::Violations;

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

}  // namespace
}  // namespace ccsandbox::proxy
