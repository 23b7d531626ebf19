#include "launcher/shim/init_protocol.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace ccsandbox::launcher {
namespace {

struct Pair {
  UniqueFd a, b;
};

Pair SocketPair() {
  int fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

InitMessage SampleExec() {
  InitMessage m;
  m.kind = InitKind::kExec;
  m.exec_id = 0x0123456789abcdefULL;
  m.value = -7;
  m.argv = {"sh", "-c", std::string("a\0b", 3), ""};
  m.env = {"PATH=/usr/bin", "EMPTY="};
  m.workdir = "/work dir";
  return m;
}

TEST(InitProtocolTest, AFrameDecodesToWhatWasEncoded) {
  const InitMessage m = SampleExec();
  const std::string frame = EncodeInitFrame(m, 3);
  size_t fds = 0;
  absl::StatusOr<InitMessage> back = DecodeInitPayload(std::string_view(frame).substr(4), fds);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, m);
  EXPECT_EQ(fds, 3u);
}

TEST(InitProtocolTest, MessagesAndDescriptorsCrossTheSocketInOrder) {
  Pair pair = SocketPair();
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  ASSERT_TRUE(SendInitMessage(pair.a.get(), SampleExec(), {write_end.get()}).ok());
  InitMessage signal{.kind = InitKind::kSignal, .exec_id = 9, .value = 15};
  ASSERT_TRUE(SendInitMessage(pair.a.get(), signal).ok());
  // A big frame arrives whole however the stream splits it.
  InitMessage big = SampleExec();
  big.argv.assign(300, std::string(3000, 'x'));
  std::thread writer([&] { EXPECT_TRUE(SendInitMessage(pair.a.get(), big).ok()); });
  InitFrameReader reader(/*accept_fds=*/true);
  std::vector<InitFrame> frames;
  while (frames.size() < 3) {
    pollfd readable{pair.b.get(), POLLIN, 0};
    ASSERT_EQ(poll(&readable, 1, 10000), 1);
    ASSERT_TRUE(reader.ReadAvailable(pair.b.get()).ok());
    while (auto frame = reader.Next()) {
      ASSERT_TRUE(frame->ok()) << frame->status();
      frames.push_back(*std::move(*frame));
    }
  }
  EXPECT_EQ(frames[0].message, SampleExec());
  ASSERT_EQ(frames[0].fds.size(), 1u);
  EXPECT_EQ(write(frames[0].fds[0].get(), "k", 1), 1);  // the pipe's write end, passed
  char c;
  EXPECT_EQ(read(read_end.get(), &c, 1), 1);
  EXPECT_EQ(frames[1].message, signal);
  EXPECT_TRUE(frames[1].fds.empty());
  EXPECT_EQ(frames[2].message, big);
  writer.join();
}

TEST(InitProtocolTest, TheLaunchersSideRefusesDescriptorsFromTheSandbox) {
  Pair pair = SocketPair();
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  ASSERT_TRUE(SendInitMessage(pair.a.get(), {.kind = InitKind::kReady}, {write_end.get()}).ok());
  InitFrameReader reader(/*accept_fds=*/false);
  EXPECT_FALSE(reader.ReadAvailable(pair.b.get()).ok());
  auto frame = reader.Next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_FALSE(frame->ok());
}

TEST(InitProtocolTest, MalformedFramesAreRefused) {
  auto payload_of = [](const InitMessage& m, size_t fds) {
    return EncodeInitFrame(m, fds).substr(4);
  };
  std::string unknown_kind = payload_of(SampleExec(), 0);
  unknown_kind[0] = 99;
  std::string huge_count = payload_of(InitMessage{}, 0);
  huge_count[20] = '\xff';  // argv count
  huge_count[21] = '\xff';
  const struct {
    std::string name;
    std::string payload;
  } cases[] = {
      {"empty", ""},
      {"unknown kind", unknown_kind},
      {"truncated", payload_of(SampleExec(), 0).substr(0, 30)},
      {"trailing bytes", payload_of(SampleExec(), 0) + "x"},
      {"argv count past the end", huge_count},
      {"too many fds", payload_of(SampleExec(), kMaxInitFrameFds + 1)},
  };
  for (const auto& c : cases) {
    size_t fds = 0;
    EXPECT_FALSE(DecodeInitPayload(c.payload, fds).ok()) << c.name;
  }
}

TEST(InitProtocolTest, AFrameThatClaimsMoreDescriptorsThanCameIsRefused) {
  Pair pair = SocketPair();
  const std::string frame = EncodeInitFrame(SampleExec(), 2);
  ASSERT_EQ(write(pair.a.get(), frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
  InitFrameReader reader(/*accept_fds=*/true);
  ASSERT_TRUE(reader.ReadAvailable(pair.b.get()).ok());
  auto next = reader.Next();
  ASSERT_TRUE(next.has_value());
  EXPECT_FALSE(next->ok());
}

TEST(InitProtocolTest, AnOversizedLengthIsRefusedBeforeItsBytesCome) {
  Pair pair = SocketPair();
  const uint32_t length = kMaxInitFrameBytes + 1;
  ASSERT_EQ(write(pair.a.get(), &length, 4), 4);
  InitFrameReader reader(/*accept_fds=*/true);
  ASSERT_TRUE(reader.ReadAvailable(pair.b.get()).ok());
  auto next = reader.Next();
  ASSERT_TRUE(next.has_value());
  EXPECT_FALSE(next->ok());
}

TEST(InitProtocolTest, ACloseAfterWholeFramesIsReportedAfterThem) {
  Pair pair = SocketPair();
  ASSERT_TRUE(SendInitMessage(pair.a.get(), {.kind = InitKind::kReady}).ok());
  pair.a.Reset();
  InitFrameReader reader(/*accept_fds=*/false);
  ASSERT_TRUE(reader.ReadAvailable(pair.b.get()).ok());
  auto first = reader.Next();
  ASSERT_TRUE(first.has_value() && first->ok());
  EXPECT_EQ((*first)->message.kind, InitKind::kReady);
  auto second = reader.Next();
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(absl::IsUnavailable(second->status()));
  EXPECT_TRUE(reader.closed());
}

}  // namespace
}  // namespace ccsandbox::launcher
