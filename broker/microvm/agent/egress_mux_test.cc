// The whole egress chain without qemu: TCP clients on 127.0.0.1 -> the guest's EgressMux (its
// own thread here, as in the agent's loop) -> a socketpair standing in for the virtio-serial
// port -> the host's EgressBridge -> Unix servers standing in for the session's proxies.
// Prints the chain's throughput next to a direct Unix socket's, measured in the same run.
#include "broker/microvm/agent/egress_mux.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "broker/microvm/egress_bridge.h"
#include "broker/microvm/egress_test_support.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker::microvm {
namespace {

// The guest's mux in a loop of its own, until destroyed.
class GuestLoop {
 public:
  explicit GuestLoop(UniqueFd channel) {
    std::string error;
    mux_ = EgressMux::Create(
        std::move(channel),
        {{"127.0.0.1", 0, EgressListener::kHttp}, {"127.0.0.1", 0, EgressListener::kSocks}},
        &error);
    if (mux_ == nullptr) {
      ADD_FAILURE() << error;
      return;
    }
    ports_ = mux_->ports();
    int wake[2];
    pipe2(wake, O_CLOEXEC);
    wake_read_ = UniqueFd(wake[0]);
    wake_write_ = UniqueFd(wake[1]);
    thread_ = std::thread([this] { Run(); });
  }
  ~GuestLoop() {
    if (!thread_.joinable()) return;
    write(wake_write_.get(), "x", 1);
    thread_.join();
  }
  uint16_t port(EgressListener listener) const { return ports_[static_cast<int>(listener)]; }
  size_t peak_toward_clients() const { return peak_; }
  size_t streams() const { return streams_; }

 private:
  void Run() {
    std::vector<pollfd> fds;
    while (true) {
      fds.assign(1, {wake_read_.get(), POLLIN, 0});
      mux_->Fill(&fds);
      poll(fds.data(), fds.size(), mux_->TimeoutMs());
      if (fds[0].revents != 0) return;
      mux_->Handle(fds.data() + 1, fds.size() - 1);
      peak_ = mux_->endpoint().peak_toward_sockets();
      streams_ = mux_->endpoint().streams();
    }
  }
  std::unique_ptr<EgressMux> mux_;
  std::vector<uint16_t> ports_;
  UniqueFd wake_read_, wake_write_;
  std::atomic<size_t> peak_ = 0, streams_ = 0;
  std::thread thread_;
};

UniqueFd ConnectTcp(uint16_t port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  return fd;
}

UniqueFd ConnectUnix(const std::string& path) {
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{.sun_family = AF_UNIX};
  memcpy(address.sun_path, path.c_str(), path.size() + 1);
  EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  return fd;
}

std::string Pattern(size_t size, int seed) {
  std::string out(size, '\0');
  uint32_t x = 2463534242u + seed;
  for (char& c : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x);
  }
  return out;
}

// Sends `bytes` on `fd` from a thread while reading the echo back here; returns what came back.
std::string EchoThrough(int fd, const std::string& bytes) {
  std::thread writer([&] {
    WriteAll(fd, bytes);
    shutdown(fd, SHUT_WR);
  });
  std::string back = ReadAll(fd);
  writer.join();
  return back;
}

class EgressChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int pair[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    guest_ = std::make_unique<GuestLoop>(UniqueFd(pair[0]));
    absl::StatusOr<std::unique_ptr<EgressBridge>> bridge =
        EgressBridge::Start(UniqueFd(pair[1]), {.http_socket = dir_.File("http.sock"),
                                                .socks_socket = dir_.File("socks.sock"),
                                                .name = "chain"});
    ASSERT_TRUE(bridge.ok()) << bridge.status();
    bridge_ = std::move(*bridge);
  }
  void TearDown() override {
    bridge_.reset();
    guest_.reset();
  }
  TempDir dir_;
  std::unique_ptr<GuestLoop> guest_;
  std::unique_ptr<EgressBridge> bridge_;
};

TEST_F(EgressChainTest, EightMiBEachWayArriveIntactAndEachPortReachesItsProxy) {
  StandInServer http(dir_.File("http.sock"), StandInServer::Mode::kEcho);
  StandInServer socks(dir_.File("socks.sock"), StandInServer::Mode::kAnswer, "socks here");
  const std::string bytes = Pattern(8 << 20, 1);
  UniqueFd client = ConnectTcp(guest_->port(EgressListener::kHttp));
  const std::string back = EchoThrough(client.get(), bytes);
  EXPECT_EQ(back.size(), bytes.size());
  EXPECT_TRUE(back == bytes) << "the echo differs";
  UniqueFd socks_client = ConnectTcp(guest_->port(EgressListener::kSocks));
  EXPECT_EQ(EchoThrough(socks_client.get(), "hi\r\n\r\n"), "socks here");
  EXPECT_EQ(http.accepted(), 1);
  EXPECT_EQ(socks.accepted(), 1);
  EXPECT_EQ(bridge_->failure(), "");
}

TEST_F(EgressChainTest, AHundredConcurrentStreamsEachGetTheirOwnBytes) {
  StandInServer http(dir_.File("http.sock"), StandInServer::Mode::kEcho);
  constexpr int kStreams = 100;
  std::vector<UniqueFd> clients;
  std::vector<std::string> sent;
  for (int i = 0; i < kStreams; ++i) {
    clients.push_back(ConnectTcp(guest_->port(EgressListener::kHttp)));
    sent.push_back(Pattern(16 * 1024 + i, i));
    ASSERT_TRUE(WriteAll(clients.back().get(), sent.back()));
  }
  // All open at once before any ends.
  while (bridge_->streams() < kStreams || http.accepted() < kStreams) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(guest_->streams(), static_cast<size_t>(kStreams));
  for (int i = 0; i < kStreams; ++i) {
    shutdown(clients[i].get(), SHUT_WR);
    EXPECT_TRUE(ReadAll(clients[i].get()) == sent[i]) << "stream " << i;
  }
}

TEST_F(EgressChainTest, AClientThatNeverReadsHoldsAtMostAWindowInTheGuest) {
  const std::string flood = Pattern(8 << 20, 7);
  StandInServer http(dir_.File("http.sock"), StandInServer::Mode::kAnswer, flood);
  UniqueFd client = ConnectTcp(guest_->port(EgressListener::kHttp));
  // A fixed receive buffer (no autotuning): the kernel absorbs a few MiB of the flood at most.
  const int small = 64 * 1024;
  setsockopt(client.get(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  ASSERT_TRUE(WriteAll(client.get(), "GET /\r\n\r\n"));
  // Wait until the guest holds a full window it cannot write; then it must not take more.
  while (guest_->peak_toward_clients() < kEgressWindow) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(guest_->peak_toward_clients(), kEgressWindow);
  // And the bytes were all there to be read, intact.
  EXPECT_TRUE(ReadAll(client.get()) == flood);
  EXPECT_EQ(guest_->peak_toward_clients(), kEgressWindow);
}

TEST_F(EgressChainTest, NoProxyClosesTheClientsConnection) {
  UniqueFd client = ConnectTcp(guest_->port(EgressListener::kSocks));
  WriteAll(client.get(), "anyone?");
  EXPECT_EQ(ReadAll(client.get()), "");
  EXPECT_EQ(bridge_->failure(), "");
}

// Figures, not assertions: the chain against a direct Unix socket, the same servers.
TEST_F(EgressChainTest, ThroughputAgainstADirectUnixSocket) {
  StandInServer http(dir_.File("http.sock"), StandInServer::Mode::kEcho);
  const std::string bytes = Pattern(64 << 20, 3);
  auto measure = [&](UniqueFd fd) {
    const auto start = std::chrono::steady_clock::now();
    const std::string back = EchoThrough(fd.get(), bytes);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(back == bytes);
    return (bytes.size() >> 20) / seconds;
  };
  const double direct = measure(ConnectUnix(dir_.File("http.sock")));
  const double chain = measure(ConnectTcp(guest_->port(EgressListener::kHttp)));
  std::cout << "egress echo of 64 MiB (each way, concurrently): direct Unix socket " << direct
            << " MiB/s; TCP -> guest mux -> channel -> host bridge -> Unix socket " << chain
            << " MiB/s" << std::endl;
}

TEST_F(EgressChainTest, UploadThroughputAgainstADirectUnixSocket) {
  StandInServer http(dir_.File("http.sock"), StandInServer::Mode::kDrain);
  const std::string bytes = Pattern(128 << 20, 4);
  auto measure = [&](UniqueFd fd) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(WriteAll(fd.get(), bytes));
    shutdown(fd.get(), SHUT_WR);
    EXPECT_EQ(ReadAll(fd.get()), std::to_string(bytes.size()));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return (bytes.size() >> 20) / seconds;
  };
  const double direct = measure(ConnectUnix(dir_.File("http.sock")));
  const double chain = measure(ConnectTcp(guest_->port(EgressListener::kHttp)));
  std::cout << "egress upload of 128 MiB: direct Unix socket " << direct
            << " MiB/s; TCP -> guest mux -> channel -> host bridge -> Unix socket " << chain
            << " MiB/s" << std::endl;
}

}  // namespace
}  // namespace ccsandbox::broker::microvm
