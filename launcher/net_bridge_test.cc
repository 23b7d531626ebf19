#include "launcher/net_bridge.h"

#include <stdlib.h>
#include <unistd.h>

#include <thread>

#include "gtest/gtest.h"

namespace ccsandbox::launcher {
namespace {

TEST(ParseBridgeRoute, AcceptsLoopbackOnly) {
  auto v4 = ParseBridgeRoute("127.0.0.1:3128=/run/http.sock");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->listen_address, "127.0.0.1");
  EXPECT_EQ(v4->listen_port, 3128);
  EXPECT_EQ(v4->unix_path, "/run/http.sock");
  auto v6 = ParseBridgeRoute("[::1]:1080=/run/socks.sock");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->listen_address, "::1");
  EXPECT_FALSE(ParseBridgeRoute("0.0.0.0:3128=/run/x").ok());
  EXPECT_FALSE(ParseBridgeRoute("10.0.0.1:3128=/run/x").ok());
  EXPECT_FALSE(ParseBridgeRoute("127.0.0.1:99999=/run/x").ok());
  EXPECT_FALSE(ParseBridgeRoute("127.0.0.1:80=relative").ok());
  EXPECT_FALSE(ParseBridgeRoute("garbage").ok());
}

// A Unix echo server stands in for the proxy; many concurrent clients go through the bridge
// on one event loop and get their bytes back, including a large transfer and half-close.
TEST(NetBridge, RelaysManyConcurrentConnectionsBothWays) {
  char tmpl[] = "/tmp/bridge.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string socket_path = std::string(tmpl) + "/echo.sock";

  asio::io_context io;
  asio::local::stream_protocol::acceptor echo(io, asio::local::stream_protocol::endpoint(socket_path));
  std::function<void()> accept_echo = [&] {
    echo.async_accept([&](const asio::error_code& error, asio::local::stream_protocol::socket s) {
      if (error) return;
      std::thread([s = std::move(s)]() mutable {
        std::vector<char> buf(65536);
        asio::error_code e;
        for (;;) {
          size_t n = s.read_some(asio::buffer(buf), e);
          if (e) break;
          asio::write(s, asio::buffer(buf.data(), n), e);
          if (e) break;
        }
        s.shutdown(asio::socket_base::shutdown_send, e);
      }).detach();
      accept_echo();
    });
  };
  accept_echo();

  auto bridge = NetBridge::Create(io, {{"127.0.0.1", 0, socket_path}});
  ASSERT_TRUE(bridge.ok()) << bridge.status();
  (*bridge)->Start();
  const uint16_t port = (*bridge)->ports()[0];
  std::thread loop([&] { io.run(); });

  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int c = 0; c < 16; ++c) {
    clients.emplace_back([&, c] {
      asio::io_context client_io;
      asio::ip::tcp::socket s(client_io);
      asio::error_code e;
      s.connect({asio::ip::make_address("127.0.0.1"), port}, e);
      if (e) return;
      const std::string payload(c == 0 ? 8 * 1024 * 1024 : 1000, static_cast<char>('a' + c));
      std::thread writer([&] {
        asio::error_code we;
        asio::write(s, asio::buffer(payload), we);
        s.shutdown(asio::socket_base::shutdown_send, we);
      });
      std::string got;
      std::vector<char> buf(65536);
      for (;;) {
        size_t n = s.read_some(asio::buffer(buf), e);
        if (e) break;
        got.append(buf.data(), n);
      }
      writer.join();
      if (got == payload) ++ok;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 16);
  io.stop();
  loop.join();
  unlink(socket_path.c_str());
  rmdir(tmpl);
}

}  // namespace
}  // namespace ccsandbox::launcher
