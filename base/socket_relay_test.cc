#include "base/socket_relay.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "asio/executor_work_guard.hpp"
#include "asio/io_context.hpp"
#include "asio/ip/tcp.hpp"
#include "asio/local/connect_pair.hpp"
#include "asio/local/stream_protocol.hpp"
#include "asio/post.hpp"
#include "asio/read.hpp"
#include "asio/write.hpp"
#include "base/stream_test_util.h"
#include "gtest/gtest.h"

namespace ccsandbox {
namespace {

using TcpSocket = asio::ip::tcp::socket;
using UnixSocket = asio::local::stream_protocol::socket;

using ::ccsandbox::testing::Pattern;
using ::ccsandbox::testing::ReadAll;
using ::ccsandbox::testing::WriteAndShutdown;

struct Stats {
  SocketRelay::DirectionStats to_local;
  SocketRelay::DirectionStats to_remote;
};

// A relay on a loop thread of its own between a loopback TCP connection (its local side) and a
// Unix socket pair (its remote side), as in the sandbox's bridge. The test holds both peers as
// blocking sockets: client() (TCP) and server() (Unix).
class Harness {
 public:
  explicit Harness(SocketRelayOptions options = {}, std::string to_local = "",
                   std::string to_remote = "")
      : client_(peers_io_), server_(peers_io_), work_(asio::make_work_guard(io_)) {
    asio::ip::tcp::acceptor acceptor(io_, {asio::ip::address_v4::loopback(), 0});
    client_.connect(acceptor.local_endpoint());
    TcpSocket accepted(io_);
    acceptor.accept(accepted);
    UnixSocket remote(io_);
    asio::local::connect_pair(server_, remote);
    relay_ = std::make_shared<SocketRelay>(SocketRelay::Socket(std::move(accepted)),
                                           SocketRelay::Socket(std::move(remote)), options);
    asio::post(io_, [relay = relay_, to_local = std::move(to_local),
                     to_remote = std::move(to_remote)]() mutable {
      relay->Start(relay, std::move(to_local), std::move(to_remote));
    });
    loop_ = std::thread([this] { io_.run(); });
  }

  ~Harness() {
    Close();
    work_.reset();
    loop_.join();  // returns once the relay has no handler left
  }

  TcpSocket& client() { return client_; }
  UnixSocket& server() { return server_; }

  void Close() {
    asio::post(io_, [relay = relay_] { relay->Close(); });
  }

  Stats stats() {
    std::promise<Stats> stats;
    asio::post(io_, [&] {
      stats.set_value({relay_->to_local_stats(), relay_->to_remote_stats()});
    });
    return stats.get_future().get();
  }

 private:
  asio::io_context io_;
  asio::io_context peers_io_;
  TcpSocket client_;
  UnixSocket server_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::shared_ptr<SocketRelay> relay_;
  std::thread loop_;
};

// `up` and `down` MiB (plus a few bytes) both ways at once arrive byte-exact, each EOF after the
// last byte; `spliced`: whether both directions went through a pipe.
void ExpectBulkBothWays(Harness& h, size_t up_mib, size_t down_mib, bool spliced) {
  const std::string up = Pattern(up_mib * 1024 * 1024 + 17, 1);
  const std::string down = Pattern(down_mib * 1024 * 1024 + 5, 2);
  std::string server_got;
  std::thread server([&] {
    std::thread writer([&] { WriteAndShutdown(h.server(), down); });
    server_got = ReadAll(h.server());
    writer.join();
  });
  std::thread writer([&] { WriteAndShutdown(h.client(), up); });
  const std::string client_got = ReadAll(h.client());
  writer.join();
  server.join();
  EXPECT_TRUE(client_got == down) << client_got.size() << " of " << down.size();
  EXPECT_TRUE(server_got == up) << server_got.size() << " of " << up.size();
  const Stats stats = h.stats();
  EXPECT_EQ(stats.to_local.bytes, down.size());
  EXPECT_EQ(stats.to_remote.bytes, up.size());
  EXPECT_EQ(stats.to_local.spliced, spliced);
  EXPECT_EQ(stats.to_remote.spliced, spliced);
}

// Multi-MiB streams both ways at once, each well past the switch to splice, go through pipes.
TEST(SocketRelay, BulkBothWaysAtOnceIsByteExactAndSpliced) {
  Harness h;
  ExpectBulkBothWays(h, 24, 32, /*spliced=*/true);
}

// The bytes given to Start go first, then the relayed ones; small exchanges are copied.
TEST(SocketRelay, SendsTheGivenBytesFirst) {
  Harness h({}, "HTTP/1.1 200 Connection established\r\n\r\n", "early|");
  WriteAndShutdown(h.client(), "ping");
  EXPECT_EQ(ReadAll(h.server()), "early|ping");
  WriteAndShutdown(h.server(), "pong");
  EXPECT_EQ(ReadAll(h.client()), "HTTP/1.1 200 Connection established\r\n\r\npong");
  const Stats stats = h.stats();
  EXPECT_EQ(stats.to_remote.bytes, 4u);
  EXPECT_EQ(stats.to_local.bytes, 4u);
  EXPECT_FALSE(stats.to_remote.spliced);
  EXPECT_FALSE(stats.to_local.spliced);
}

// One side uploads in bulk and half-closes: the other sees EOF after exactly those bytes, and
// its bulk reply still arrives in full.
enum class FirstToFinish { kLocal, kRemote };

class SocketRelayHalfClose : public ::testing::TestWithParam<FirstToFinish> {};

TEST_P(SocketRelayHalfClose, ForwardsEofAfterTheLastByteAndKeepsTheOtherWay) {
  const std::string first = Pattern(16 * 1024 * 1024 + 1, 3);
  const std::string reply = Pattern(16 * 1024 * 1024 + 3, 4);
  Harness h;
  std::string first_got;
  std::string reply_got;
  if (GetParam() == FirstToFinish::kLocal) {
    std::thread writer([&] { WriteAndShutdown(h.client(), first); });
    first_got = ReadAll(h.server());
    writer.join();
    std::thread replier([&] { WriteAndShutdown(h.server(), reply); });
    reply_got = ReadAll(h.client());
    replier.join();
  } else {
    std::thread writer([&] { WriteAndShutdown(h.server(), first); });
    first_got = ReadAll(h.client());
    writer.join();
    std::thread replier([&] { WriteAndShutdown(h.client(), reply); });
    reply_got = ReadAll(h.server());
    replier.join();
  }
  EXPECT_TRUE(first_got == first) << first_got.size() << " of " << first.size();
  EXPECT_TRUE(reply_got == reply) << reply_got.size() << " of " << reply.size();
}

INSTANTIATE_TEST_SUITE_P(EitherSide, SocketRelayHalfClose,
                         ::testing::Values(FirstToFinish::kLocal, FirstToFinish::kRemote));

// The remote peer dies in the middle of a bulk download: the local peer gets a reset, not an
// EOF that would make the cut transfer look complete.
TEST(SocketRelay, RemoteResetDuringBulkResetsLocal) {
  Harness h;
  std::thread server([&] {
    asio::write(h.server(), asio::buffer(Pattern(4 * 1024 * 1024, 5)));
    // Unread bytes in its receive queue make the close a reset.
    std::vector<char> buf(1);
    h.server().read_some(asio::buffer(buf));
    h.server().close();
  });
  asio::write(h.client(), asio::buffer(std::string("xy")));
  asio::error_code error;
  const std::string got = ReadAll(h.client(), &error);
  server.join();
  EXPECT_LE(got.size(), 4u * 1024 * 1024);
  EXPECT_EQ(error, asio::error::connection_reset) << error.message();
}

// The local peer gives up in the middle of a bulk download (reset: the relay's next splice into
// it fails, raising SIGPIPE): the remote side is closed, and this process carries on.
TEST(SocketRelay, LocalResetDuringBulkClosesRemote) {
  Harness h;
  std::promise<asio::error_code> server_error;
  std::thread server([&] {
    const std::string chunk = Pattern(1024 * 1024, 6);
    asio::error_code e;
    while (!e) asio::write(h.server(), asio::buffer(chunk), e);
    server_error.set_value(e);
  });
  h.client().shutdown(asio::socket_base::shutdown_send);
  std::vector<char> buf(65536);
  size_t got = 0;
  while (got < 4 * 1024 * 1024) got += h.client().read_some(asio::buffer(buf));
  h.client().set_option(asio::socket_base::linger(true, 0));
  h.client().close();
  EXPECT_TRUE(server_error.get_future().get());
  server.join();
}

// A pipe the kernel leaves at 8 KiB (what an unprivileged user past the pipe budget gets, and
// cannot grow) is not worth splicing through.
TEST(SocketRelay, KeepsCopyingWhenThePipeStaysSmall) {
  SocketRelayOptions options;
  options.pipe_bytes = 8 * 1024;
  Harness h(options);
  ExpectBulkBothWays(h, 8, 8, /*spliced=*/false);
}

// Out of descriptors, pipe2 fails: the relay keeps copying.
TEST(SocketRelay, KeepsCopyingWithoutDescriptors) {
  Harness h;
  // Every descriptor below the lowest free one is in use: with that as the limit, pipe2()
  // fails with EMFILE.
  rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int lowest_free = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(lowest_free, 0);
  close(lowest_free);
  rlimit limited = saved;
  limited.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limited), 0);
  ExpectBulkBothWays(h, 8, 8, /*spliced=*/false);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
}

// No bytes either way for the idle timeout: both sides are cut.
TEST(SocketRelay, IdleTimeoutResetsBothSides) {
  SocketRelayOptions options;
  options.idle = std::chrono::milliseconds(50);
  options.half_open = std::chrono::hours(1);
  Harness h(options);
  asio::error_code client_error;
  EXPECT_EQ(ReadAll(h.client(), &client_error), "");
  EXPECT_EQ(client_error, asio::error::connection_reset) << client_error.message();
  ReadAll(h.server());  // returns: the relay closed its end
}

// Once one direction has ended, the half-open timeout applies, not the idle one.
TEST(SocketRelay, HalfOpenTimeoutAppliesOnceOneDirectionEnded) {
  SocketRelayOptions options;
  options.idle = std::chrono::hours(1);
  options.half_open = std::chrono::milliseconds(50);
  Harness h(options);
  WriteAndShutdown(h.client(), "x");
  EXPECT_EQ(ReadAll(h.server()), "x");
  asio::error_code client_error;
  EXPECT_EQ(ReadAll(h.client(), &client_error), "");
  EXPECT_EQ(client_error, asio::error::connection_reset) << client_error.message();
}

TEST(SocketRelay, CloseResetsBothSides) {
  Harness h;
  asio::write(h.client(), asio::buffer(std::string("x")));
  std::vector<char> buf(1);
  asio::read(h.server(), asio::buffer(buf));  // relaying
  h.Close();
  asio::error_code client_error;
  EXPECT_EQ(ReadAll(h.client(), &client_error), "");
  EXPECT_EQ(client_error, asio::error::connection_reset) << client_error.message();
  ReadAll(h.server());
}

}  // namespace
}  // namespace ccsandbox
