// The egress endpoint's protocol checks, driven by hand (no threads): the test decides which
// fds are ready, so a stream's socket is never written and no credit flows back unless asked.
#include "broker/microvm/egress_endpoint.h"

#include <poll.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "broker/microvm/egress_test_support.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker::microvm {
namespace {

std::string Open(uint32_t id, EgressListener listener = EgressListener::kHttp) {
  return EncodeEgressFrame(EgressFrameType::kOpen, id, std::string(1, static_cast<char>(listener)));
}
std::string Data(uint32_t id, size_t size) {
  return EncodeEgressFrame(EgressFrameType::kData, id, std::string(size, 'd'));
}
std::string Fin(uint32_t id) { return EncodeEgressFrame(EgressFrameType::kFin, id, ""); }
std::string Reset(uint32_t id) { return EncodeEgressFrame(EgressFrameType::kReset, id, ""); }
std::string Window(uint32_t id, uint32_t credit) {
  return EncodeEgressFrame(EgressFrameType::kWindow, id, EncodeU32(credit));
}
// A full window of data, in frames.
std::string FullWindow(uint32_t id) {
  std::string out;
  for (uint32_t sent = 0; sent < kEgressWindow; sent += kEgressMaxData) {
    out += Data(id, kEgressMaxData);
  }
  return out;
}

// An endpoint whose channel's other end (`peer`) the test writes, and whose streams' sockets
// are socketpairs the test holds the other ends of (`far`).
struct Harness {
  explicit Harness(EgressEndpoint::Role role, bool proxy_up = true) {
    int pair[2];
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair);
    peer = UniqueFd(pair[0]);
    endpoint =
        std::make_unique<EgressEndpoint>(role, UniqueFd(pair[1]), [this, proxy_up](EgressListener) {
          if (!proxy_up) return UniqueFd();
          int streams[2];
          socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, streams);
          far.emplace_back(streams[0]);
          return UniqueFd(streams[1]);
        });
  }
  // Writes `frames` to the channel as the endpoint reads them (more than a socket buffer).
  void Deliver(const std::string& frames) {
    size_t at = 0;
    while (at < frames.size() && endpoint->state() == EgressEndpoint::State::kOpen) {
      const ssize_t n = send(peer.get(), frames.data() + at, frames.size() - at, MSG_DONTWAIT);
      if (n > 0) at += n;
      ReadChannelOnly();
    }
    ReadChannelOnly();
  }
  // Lets the endpoint read what the peer wrote, without ever writing to a stream's socket.
  void ReadChannelOnly() {
    for (int round = 0; round < 64 && endpoint->state() == EgressEndpoint::State::kOpen; ++round) {
      std::vector<pollfd> fds;
      endpoint->Fill(&fds);
      for (pollfd& p : fds) p.revents = 0;
      pollfd channel{fds[0].fd, POLLIN, 0};
      if (poll(&channel, 1, 0) <= 0) return;
      fds[0].revents = POLLIN;
      endpoint->Handle(fds.data(), fds.size());
    }
  }
  // Frames the endpoint has sent (it writes its outbox at the end of each Handle).
  std::vector<EgressFrame> Sent() {
    std::vector<EgressFrame> frames;
    char buffer[65536];
    pollfd p{peer.get(), POLLIN, 0};
    while (poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
      const ssize_t n = read(peer.get(), buffer, sizeof(buffer));
      if (n <= 0) break;
      decoder.Feed(buffer, n);
    }
    EgressFrame frame;
    std::string error;
    while (decoder.Next(&frame, &error) == EgressFrameDecoder::Result::kFrame) {
      frames.push_back(frame);
    }
    return frames;
  }

  UniqueFd peer;
  std::vector<UniqueFd> far;
  std::unique_ptr<EgressEndpoint> endpoint;
  EgressFrameDecoder decoder{FrameSide::kFromHost};
};

struct Violation {
  const char* name;
  EgressEndpoint::Role role;
  std::string frames;
  const char* error;
};

TEST(EgressEndpointTest, AProtocolViolationBreaksTheChannelAndClosesEveryStream) {
  using Role = EgressEndpoint::Role;
  const std::vector<Violation> table = {
      {"data for a stream never opened", Role::kHost, Open(1) + Data(2, 1),
       "stream 2, never opened"},
      {"a window for a stream never opened", Role::kHost, Open(1) + Window(9, 1),
       "stream 9, never opened"},
      {"an open that reuses an id", Role::kHost, Open(1) + Open(1), "not a new id"},
      {"an open of an older id", Role::kHost, Open(1) + Open(3) + Open(2), "not a new id"},
      {"data beyond the window", Role::kHost, Open(1) + FullWindow(1) + Data(1, 1),
       "beyond the window"},
      {"data after fin", Role::kHost, Open(1) + Fin(1) + Data(1, 1), "data after fin"},
      {"fin twice", Role::kHost, Open(1) + Fin(1) + Fin(1), "fin twice"},
      {"credit beyond the window", Role::kHost, Open(1) + Window(1, 1), "credit beyond the window"},
      {"a bad frame", Role::kHost, Open(1) + std::string("Z") + EncodeU32(1) + EncodeU32(0),
       "unexpected egress frame type 90"},
      {"an open from the host", Role::kGuest, Open(1), "egress open from the host"},
      {"host data for a stream the guest never opened", Role::kGuest, Data(1, 1),
       "stream 1, never opened"},
  };
  for (const Violation& violation : table) {
    SCOPED_TRACE(violation.name);
    Harness harness(violation.role);
    harness.Deliver(violation.frames);
    EXPECT_EQ(harness.endpoint->state(), EgressEndpoint::State::kBroken);
    EXPECT_NE(harness.endpoint->error().find(violation.error), std::string::npos)
        << harness.endpoint->error();
    EXPECT_EQ(harness.endpoint->streams(), 0u);
    EXPECT_EQ(harness.endpoint->buffered(), 0u);
    // Every stream's socket is closed: its far end reads EOF.
    for (const UniqueFd& far : harness.far) EXPECT_EQ(ReadAll(far.get()), "");
    // And nothing after the violation is read or answered.
    WriteAll(harness.peer.get(), Open(100));
    harness.ReadChannelOnly();
    EXPECT_EQ(harness.endpoint->streams(), 0u);
  }
}

TEST(EgressEndpointTest, AFullWindowIsAcceptedAndHeldTowardTheSocket) {
  Harness harness(EgressEndpoint::Role::kHost);
  harness.Deliver(Open(1) + FullWindow(1) + Fin(1));
  EXPECT_EQ(harness.endpoint->state(), EgressEndpoint::State::kOpen) << harness.endpoint->error();
  EXPECT_EQ(harness.endpoint->toward_sockets(), kEgressWindow);
}

TEST(EgressEndpointTest, FramesInFlightForAClosedStreamAreDropped) {
  // The proxy cannot be reached: the open is answered with a reset, and what the guest sent
  // before it learnt that is dropped, not a violation.
  Harness harness(EgressEndpoint::Role::kHost, /*proxy_up=*/false);
  ASSERT_TRUE(WriteAll(harness.peer.get(), Open(1) + Data(1, 10) + Window(1, 5) + Fin(1)));
  harness.ReadChannelOnly();
  EXPECT_EQ(harness.endpoint->state(), EgressEndpoint::State::kOpen) << harness.endpoint->error();
  const std::vector<EgressFrame> sent = harness.Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].type, EgressFrameType::kReset);
  EXPECT_EQ(sent[0].stream, 1u);
  ASSERT_TRUE(WriteAll(harness.peer.get(), Reset(1) + Open(2) + Data(2, 1)));
  harness.ReadChannelOnly();
  EXPECT_EQ(harness.endpoint->state(), EgressEndpoint::State::kOpen) << harness.endpoint->error();
}

TEST(EgressEndpointTest, AnOpenBeyondTheCapIsResetAndTheChannelLives) {
  Harness harness(EgressEndpoint::Role::kHost);
  std::string opens;
  for (uint32_t id = 1; id <= kEgressMaxStreams + 1; ++id) opens += Open(id);
  ASSERT_TRUE(WriteAll(harness.peer.get(), opens));
  harness.ReadChannelOnly();
  EXPECT_EQ(harness.endpoint->state(), EgressEndpoint::State::kOpen) << harness.endpoint->error();
  EXPECT_EQ(harness.endpoint->streams(), kEgressMaxStreams);
  const std::vector<EgressFrame> sent = harness.Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].type, EgressFrameType::kReset);
  EXPECT_EQ(sent[0].stream, kEgressMaxStreams + 1);
}

TEST(EgressEndpointTest, TheGuestRefusesAStreamBeyondTheCap) {
  Harness harness(EgressEndpoint::Role::kGuest);
  std::vector<UniqueFd> clients;
  for (size_t i = 0; i <= kEgressMaxStreams; ++i) {
    int pair[2];
    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair);
    clients.emplace_back(pair[0]);
    EXPECT_EQ(harness.endpoint->Open(UniqueFd(pair[1]), EgressListener::kSocks),
              i < kEgressMaxStreams);
  }
  EXPECT_EQ(ReadAll(clients.back().get()), "");  // the refused one is closed
}

}  // namespace
}  // namespace ccsandbox::broker::microvm
