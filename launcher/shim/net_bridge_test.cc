#include "launcher/shim/net_bridge.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/stream_test_util.h"
#include "gtest/gtest.h"

namespace ccsandbox::launcher {
namespace {

using UnixSocket = asio::local::stream_protocol::socket;
using TcpSocket = asio::ip::tcp::socket;

using ::ccsandbox::testing::Pattern;
using ::ccsandbox::testing::ReadAll;
using ::ccsandbox::testing::WriteAndShutdown;

// A Unix server stands in for the proxy: each accepted connection is handed to
// `handler` on its own thread. The bridge runs on the same event loop, on a
// thread of its own, as in the shim.
class Bridge {
 public:
  using Handler = std::function<void(UnixSocket&)>;

  explicit Bridge(Handler handler) : handler_(std::move(handler)) {
    char tmpl[] = "/tmp/bridge.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) abort();
    dir_ = tmpl;
    socket_path_ = dir_ + "/proxy.sock";
    server_.emplace(io_, asio::local::stream_protocol::endpoint(socket_path_));
    AcceptServer();
    auto bridge = NetBridge::Create(io_, {{"127.0.0.1", 0, socket_path_}});
    if (!bridge.ok()) abort();
    bridge_ = std::move(*bridge);
    bridge_->Start();
    port_ = bridge_->ports()[0];
    loop_ = std::thread([this] { io_.run(); });
  }

  ~Bridge() {
    io_.stop();
    loop_.join();
    for (std::thread& t : handlers_) t.join();
    unlink(socket_path_.c_str());
    rmdir(dir_.c_str());
  }

  TcpSocket Connect(asio::io_context& client_io) {
    TcpSocket s(client_io);
    s.connect({asio::ip::make_address("127.0.0.1"), port_});
    return s;
  }

 private:
  void AcceptServer() {
    server_->async_accept([this](const asio::error_code& error, UnixSocket s) {
      if (error) return;
      handlers_.emplace_back([this, s = std::move(s)]() mutable { handler_(s); });
      AcceptServer();
    });
  }

  Handler handler_;
  std::string dir_;
  std::string socket_path_;
  asio::io_context io_;
  std::optional<asio::local::stream_protocol::acceptor> server_;
  std::unique_ptr<NetBridge> bridge_;
  uint16_t port_ = 0;
  std::thread loop_;
  std::vector<std::thread> handlers_;  // touched only on the loop thread
};

void Echo(UnixSocket& s) {
  std::vector<char> buf(65536);
  asio::error_code e;
  for (;;) {
    size_t n = s.read_some(asio::buffer(buf), e);
    if (e) break;
    asio::write(s, asio::buffer(buf.data(), n), e);
    if (e) break;
  }
  s.shutdown(asio::socket_base::shutdown_send, e);
}

// Many concurrent clients on one event loop get their bytes back, including a
// large transfer (spliced once bulk) and half-close.
TEST(NetBridge, RelaysManyConcurrentConnectionsBothWays) {
  Bridge bridge(Echo);
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int c = 0; c < 16; ++c) {
    clients.emplace_back([&, c] {
      asio::io_context client_io;
      TcpSocket s = bridge.Connect(client_io);
      const std::string payload = Pattern(c == 0 ? 8 * 1024 * 1024 : 1000, c);
      std::thread writer([&] { WriteAndShutdown(s, payload); });
      const std::string got = ReadAll(s);
      writer.join();
      if (got == payload) ++ok;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 16);
}

// Multi-MiB streams both ways at once, each well past the switch to splice,
// arrive byte-exact, and each EOF arrives after the last byte.
TEST(NetBridge, BulkBothWaysAtOnceIsByteExact) {
  const std::string up = Pattern(24 * 1024 * 1024 + 17, 1);
  const std::string down = Pattern(32 * 1024 * 1024 + 5, 2);
  std::promise<std::string> server_got;
  Bridge bridge([&](UnixSocket& s) {
    std::thread writer([&] { WriteAndShutdown(s, down); });
    server_got.set_value(ReadAll(s));
    writer.join();
  });
  asio::io_context client_io;
  TcpSocket s = bridge.Connect(client_io);
  std::thread writer([&] { WriteAndShutdown(s, up); });
  const std::string client_got = ReadAll(s);
  writer.join();
  EXPECT_TRUE(client_got == down) << client_got.size() << " of " << down.size();
  const std::string got = server_got.get_future().get();
  EXPECT_TRUE(got == up) << got.size() << " of " << up.size();
}

// The client half-closes after a bulk upload: the proxy sees EOF after exactly
// the uploaded bytes, and its bulk reply still reaches the client in full.
TEST(NetBridge, HalfCloseFromClientAfterBulk) {
  const std::string up = Pattern(16 * 1024 * 1024, 3);
  const std::string reply = Pattern(16 * 1024 * 1024 + 3, 4);
  std::promise<std::string> server_got;
  Bridge bridge([&](UnixSocket& s) {
    server_got.set_value(ReadAll(s));
    WriteAndShutdown(s, reply);
  });
  asio::io_context client_io;
  TcpSocket s = bridge.Connect(client_io);
  WriteAndShutdown(s, up);
  const std::string got = server_got.get_future().get();
  EXPECT_TRUE(got == up) << got.size() << " of " << up.size();
  const std::string client_got = ReadAll(s);
  EXPECT_TRUE(client_got == reply) << client_got.size() << " of " << reply.size();
}

// The proxy half-closes after a bulk download: the client sees EOF after
// exactly the downloaded bytes and can still upload in bulk.
TEST(NetBridge, HalfCloseFromProxyAfterBulk) {
  const std::string down = Pattern(16 * 1024 * 1024 + 1, 5);
  const std::string up = Pattern(16 * 1024 * 1024 + 9, 6);
  std::promise<std::string> server_got;
  Bridge bridge([&](UnixSocket& s) {
    WriteAndShutdown(s, down);
    server_got.set_value(ReadAll(s));
  });
  asio::io_context client_io;
  TcpSocket s = bridge.Connect(client_io);
  const std::string client_got = ReadAll(s);
  EXPECT_TRUE(client_got == down) << client_got.size() << " of " << down.size();
  WriteAndShutdown(s, up);
  const std::string got = server_got.get_future().get();
  EXPECT_TRUE(got == up) << got.size() << " of " << up.size();
}

// Without a pipe to splice through (here: out of descriptors), a bulk
// connection keeps copying, byte-exact both ways.
TEST(NetBridge, BulkWithoutPipesKeepsCopying) {
  const std::string up = Pattern(8 * 1024 * 1024 + 11, 10);
  const std::string down = Pattern(8 * 1024 * 1024 + 13, 11);
  std::promise<void> connected;
  std::promise<void> go;
  std::shared_future<void> go_future = go.get_future().share();
  std::promise<std::string> server_got;
  Bridge bridge([&](UnixSocket& s) {
    connected.set_value();
    go_future.wait();
    std::thread writer([&] { WriteAndShutdown(s, down); });
    server_got.set_value(ReadAll(s));
    writer.join();
  });
  asio::io_context client_io;
  TcpSocket s = bridge.Connect(client_io);
  connected.get_future().wait();
  // Every descriptor below the lowest free one is in use: with that as the
  // limit, pipe2() fails with EMFILE.
  rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int lowest_free = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(lowest_free, 0);
  close(lowest_free);
  rlimit limited = saved;
  limited.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limited), 0);
  go.set_value();
  std::thread writer([&] { WriteAndShutdown(s, up); });
  const std::string client_got = ReadAll(s);
  writer.join();
  const std::string got = server_got.get_future().get();
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_TRUE(client_got == down) << client_got.size() << " of " << down.size();
  EXPECT_TRUE(got == up) << got.size() << " of " << up.size();
}

// A client that gives up in the middle of a bulk download (half-closed, then
// reset: the bridge's next splice into it fails with EPIPE, which raises
// SIGPIPE) cuts only its own connection: the proxy's side is closed, and the
// bridge — and this process — carry on.
TEST(NetBridge, ClientAbortDuringBulkClosesBothSidesOnly) {
  std::promise<asio::error_code> server_error;
  std::atomic<int> connection{0};
  Bridge bridge([&](UnixSocket& s) {
    if (connection++ > 0) {
      Echo(s);
      return;
    }
    const std::string chunk = Pattern(1024 * 1024, 7);
    asio::error_code e;
    while (!e) asio::write(s, asio::buffer(chunk), e);
    server_error.set_value(e);
  });
  {
    asio::io_context client_io;
    TcpSocket s = bridge.Connect(client_io);
    s.shutdown(asio::socket_base::shutdown_send);
    std::vector<char> buf(65536);
    size_t got = 0;
    while (got < 4 * 1024 * 1024) got += s.read_some(asio::buffer(buf));
    s.set_option(asio::socket_base::linger(true, 0));
    s.close();
  }
  EXPECT_TRUE(server_error.get_future().get());

  asio::io_context client_io;
  TcpSocket s = bridge.Connect(client_io);
  const std::string payload = Pattern(1024 * 1024, 8);
  std::thread writer([&] { WriteAndShutdown(s, payload); });
  EXPECT_TRUE(ReadAll(s) == payload);
  writer.join();
}

// The proxy dies in the middle of a bulk download: the client gets a reset,
// not an EOF that would make the cut transfer look complete.
TEST(NetBridge, ProxyErrorDuringBulkResetsClient) {
  Bridge bridge([&](UnixSocket& s) {
    const std::string chunk = Pattern(4 * 1024 * 1024, 9);
    asio::write(s, asio::buffer(chunk));
    // Unread bytes in its receive queue make the close a reset.
    std::vector<char> buf(1);
    s.read_some(asio::buffer(buf));
    s.close();
  });
  asio::io_context client_io;
  TcpSocket s = bridge.Connect(client_io);
  asio::write(s, asio::buffer(std::string("xy")));
  asio::error_code error;
  const std::string got = ReadAll(s, &error);
  EXPECT_LE(got.size(), 4u * 1024 * 1024);
  EXPECT_EQ(error, asio::error::connection_reset) << error.message();
}

}  // namespace
}  // namespace ccsandbox::launcher
