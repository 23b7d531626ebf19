// The host's egress bridge against a fake guest (raw frames over a socketpair) and real Unix
// servers standing in for the session's proxies.
#include "broker/microvm/egress_bridge.h"

#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include <cerrno>
#include <iostream>
#include <string>
#include <vector>

#include "broker/microvm/egress_endpoint.h"
#include "broker/microvm/egress_test_support.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker::microvm {
namespace {

// The guest's side of the channel, frame by frame.
class FakeGuest {
 public:
  FakeGuest() {
    int pair[2];
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair);
    fd_ = UniqueFd(pair[0]);
    host_end_ = UniqueFd(pair[1]);
  }
  UniqueFd TakeHostEnd() { return std::move(host_end_); }
  void Send(EgressFrameType type, uint32_t stream, const std::string& payload = "") {
    ASSERT_TRUE(WriteAll(fd_.get(), EncodeEgressFrame(type, stream, payload)));
  }
  void Open(uint32_t stream, EgressListener listener) {
    Send(EgressFrameType::kOpen, stream, std::string(1, static_cast<char>(listener)));
  }
  // The next frame from the bridge; nullopt at EOF or when none comes within `wait_ms`.
  std::optional<EgressFrame> Next(int wait_ms = 30000) {
    EgressFrame frame;
    std::string error;
    while (decoder_.Next(&frame, &error) != EgressFrameDecoder::Result::kFrame) {
      if (!error.empty()) return std::nullopt;
      pollfd p{fd_.get(), POLLIN, 0};
      if (poll(&p, 1, wait_ms) <= 0) return std::nullopt;
      char buffer[65536];
      const ssize_t n = read(fd_.get(), buffer, sizeof(buffer));
      if (n <= 0) {
        eof_ = true;
        return std::nullopt;
      }
      decoder_.Feed(buffer, n);
    }
    return frame;
  }
  bool eof() const { return eof_; }
  int fd() const { return fd_.get(); }

 private:
  UniqueFd fd_, host_end_;
  EgressFrameDecoder decoder_{FrameSide::kFromHost};
  bool eof_ = false;
};

// What the bridge sent on one stream up to its fin or reset.
struct StreamEnd {
  std::string data;
  bool fin = false, reset = false;
};

StreamEnd Collect(FakeGuest& guest, uint32_t stream) {
  StreamEnd end;
  while (std::optional<EgressFrame> frame = guest.Next()) {
    if (frame->stream != stream) continue;
    if (frame->type == EgressFrameType::kData) end.data += frame->payload;
    if (frame->type == EgressFrameType::kFin) end.fin = true;
    if (frame->type == EgressFrameType::kReset) end.reset = true;
    if (end.fin || end.reset) break;
  }
  return end;
}

class EgressBridgeTest : public ::testing::Test {
 protected:
  std::unique_ptr<EgressBridge> Start(FakeGuest& guest) {
    absl::StatusOr<std::unique_ptr<EgressBridge>> bridge =
        EgressBridge::Start(guest.TakeHostEnd(), {.http_socket = dir_.File("http.sock"),
                                                  .socks_socket = dir_.File("socks.sock"),
                                                  .name = "test"});
    EXPECT_TRUE(bridge.ok()) << bridge.status();
    return std::move(*bridge);
  }
  TempDir dir_;
};

TEST_F(EgressBridgeTest, EachListenerReachesItsProxyAndFinsHalfClose) {
  StandInServer http(dir_.File("http.sock"), StandInServer::Mode::kEcho);
  StandInServer socks(dir_.File("socks.sock"), StandInServer::Mode::kAnswer, "from socks");
  FakeGuest guest;
  std::unique_ptr<EgressBridge> bridge = Start(guest);
  guest.Open(1, EgressListener::kHttp);
  guest.Send(EgressFrameType::kData, 1, "hello");
  // The guest's half-close reaches the echo server, which answers and then closes its side.
  guest.Send(EgressFrameType::kFin, 1);
  StreamEnd echoed = Collect(guest, 1);
  EXPECT_EQ(echoed.data, "hello");
  EXPECT_TRUE(echoed.fin);
  guest.Open(2, EgressListener::kSocks);
  guest.Send(EgressFrameType::kData, 2, "request\r\n\r\n");
  StreamEnd answered = Collect(guest, 2);
  EXPECT_EQ(answered.data, "from socks");
  EXPECT_TRUE(answered.fin);
  EXPECT_EQ(socks.last_request(), "request\r\n\r\n");
  EXPECT_EQ(http.accepted(), 1);
  EXPECT_EQ(bridge->failure(), "");
}

TEST_F(EgressBridgeTest, AStreamWhoseProxyIsMissingIsReset) {
  FakeGuest guest;  // no server on either socket
  std::unique_ptr<EgressBridge> bridge = Start(guest);
  guest.Open(1, EgressListener::kHttp);
  guest.Send(EgressFrameType::kData, 1, "lost");
  EXPECT_TRUE(Collect(guest, 1).reset);
  // The channel lives on: a later stream to a proxy that is there works.
  StandInServer socks(dir_.File("socks.sock"), StandInServer::Mode::kEcho);
  guest.Open(2, EgressListener::kSocks);
  guest.Send(EgressFrameType::kData, 2, "x");
  guest.Send(EgressFrameType::kFin, 2);
  EXPECT_EQ(Collect(guest, 2).data, "x");
  EXPECT_EQ(bridge->failure(), "");
}

TEST_F(EgressBridgeTest, AStalledProxyHoldsAtMostOneWindowThenTheGuestMustWait) {
  StandInServer stalled(dir_.File("http.sock"), StandInServer::Mode::kNeverRead);
  FakeGuest guest;
  std::unique_ptr<EgressBridge> bridge = Start(guest);
  guest.Open(1, EgressListener::kHttp);
  // The guest sends whatever its credit allows, until the bridge holds a full window it cannot
  // write (the proxy's socket buffer is full) and has given no credit back.
  uint64_t credit = kEgressWindow, sent = 0;
  while (!(credit == 0 && bridge->toward_proxies() == kEgressWindow)) {
    while (credit > 0) {
      const uint32_t size = std::min<uint64_t>(credit, kEgressMaxData);
      guest.Send(EgressFrameType::kData, 1, std::string(size, 's'));
      credit -= size;
      sent += size;
    }
    std::optional<EgressFrame> frame = guest.Next(100);
    if (frame && frame->type == EgressFrameType::kWindow) credit += DecodeU32(frame->payload);
    ASSERT_FALSE(guest.eof());
    ASSERT_LT(sent, 64u << 20) << "the bridge kept crediting a proxy that never reads";
  }
  std::cout << "stalled proxy: the guest sent " << sent << " bytes; the bridge holds "
            << bridge->toward_proxies() << ", at most " << bridge->peak_toward_proxies()
            << std::endl;
  EXPECT_EQ(bridge->peak_toward_proxies(), kEgressWindow);
  // One byte beyond the credit is a guest breaking the protocol: everything is closed.
  guest.Send(EgressFrameType::kData, 1, "!");
  while (guest.Next()) {
  }
  EXPECT_TRUE(guest.eof());
  EXPECT_TRUE(bridge->guest_misbehaved());
  EXPECT_NE(bridge->failure().find("beyond the window"), std::string::npos) << bridge->failure();
  EXPECT_EQ(bridge->streams(), 0u);
}

TEST_F(EgressBridgeTest, AGuestThatNeverReadsIsStalledNotBufferedFor) {
  FakeGuest guest;  // no proxy: every open is answered with a reset the guest never reads
  std::unique_ptr<EgressBridge> bridge = Start(guest);
  // Writes opens until the bridge stops taking them (nothing was writable for a second).
  std::string opens;
  uint32_t next = 1;
  size_t at = 0;
  while (true) {
    if (at == opens.size()) {
      opens.clear();
      for (uint32_t i = 0; i < 4096; ++i, ++next) {
        opens += EncodeEgressFrame(EgressFrameType::kOpen, next, std::string(1, '\0'));
      }
      at = 0;
    }
    const ssize_t n = send(guest.fd(), opens.data() + at, opens.size() - at, MSG_DONTWAIT);
    if (n > 0) {
      at += n;
      continue;
    }
    ASSERT_TRUE(n < 0 && errno == EAGAIN) << strerror(errno);
    pollfd p{guest.fd(), POLLOUT, 0};
    if (poll(&p, 1, 1000) == 0) break;
    ASSERT_LT(next, 2'000'000u) << "the bridge kept reading a guest that never reads";
  }
  const size_t written = next - 1 - (opens.size() - at) / (kEgressFrameHeader + 1);
  std::cout << "a guest that never reads: " << written << " opens written, at most "
            << bridge->peak_toward_guest() << " bytes toward it" << std::endl;
  EXPECT_LE(bridge->peak_toward_guest(), kEgressControlHigh + 256 * 1024);
  EXPECT_EQ(bridge->failure(), "");
}

TEST_F(EgressBridgeTest, AGuestThatBreaksTheProtocolHasEveryStreamClosed) {
  StandInServer http(dir_.File("http.sock"), StandInServer::Mode::kEcho);
  FakeGuest guest;
  std::unique_ptr<EgressBridge> bridge = Start(guest);
  guest.Open(1, EgressListener::kHttp);
  guest.Send(EgressFrameType::kData, 1, "ping");
  std::optional<EgressFrame> echo;
  do {
    echo = guest.Next();
    ASSERT_TRUE(echo.has_value());
  } while (echo->type != EgressFrameType::kData);
  EXPECT_EQ(echo->payload, "ping");
  guest.Send(EgressFrameType::kData, 7, "never opened");
  while (guest.Next()) {
  }
  EXPECT_TRUE(guest.eof());
  EXPECT_TRUE(bridge->guest_misbehaved());
  EXPECT_NE(bridge->failure().find("never opened"), std::string::npos) << bridge->failure();
}

TEST_F(EgressBridgeTest, StopClosesEveryFd) {
  const int before = OpenFds();
  {
    // All of it goes before the count: a descriptor left open is the bridge's.
    StandInServer http(dir_.File("http.sock"), StandInServer::Mode::kEcho);
    StandInServer socks(dir_.File("socks.sock"), StandInServer::Mode::kNeverRead);
    FakeGuest guest;
    std::unique_ptr<EgressBridge> bridge = Start(guest);
    for (uint32_t id = 1; id <= 20; ++id) {
      guest.Open(id, id % 2 ? EgressListener::kHttp : EgressListener::kSocks);
      guest.Send(EgressFrameType::kData, id, "data");
    }
    while (bridge->streams() < 20) {
      guest.Next(10);
    }
    bridge->Stop();
    EXPECT_EQ(bridge->streams(), 0u);
    while (guest.Next()) {
    }
    EXPECT_TRUE(guest.eof());  // the channel is closed too
  }
  EXPECT_EQ(OpenFds(), before);
}

}  // namespace
}  // namespace ccsandbox::broker::microvm
