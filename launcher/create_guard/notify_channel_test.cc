#include "launcher/create_guard/notify_channel.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace ccsandbox::launcher {
namespace {

TEST(NotifyChannel, PassesOneFdCloseOnExec) {
  absl::StatusOr<std::pair<UniqueFd, UniqueFd>> pair = NotifyChannelPair();
  ASSERT_TRUE(pair.ok()) << pair.status();
  UniqueFd memfd(memfd_create("notify-channel-test", 0));
  ASSERT_TRUE(memfd.valid());
  ASSERT_TRUE(SendNotifyFd(pair->second.get(), memfd.get()).ok());
  absl::StatusOr<UniqueFd> received = ReceiveNotifyFd(pair->first.get());
  ASSERT_TRUE(received.ok()) << received.status();
  struct stat a, b;
  ASSERT_EQ(fstat(memfd.get(), &a), 0);
  ASSERT_EQ(fstat(received->get(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(fcntl(received->get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
}

TEST(NotifyChannel, PeerClosingWithoutAnFdIsUnavailable) {
  absl::StatusOr<std::pair<UniqueFd, UniqueFd>> pair = NotifyChannelPair();
  ASSERT_TRUE(pair.ok());
  pair->second.Reset();
  EXPECT_EQ(ReceiveNotifyFd(pair->first.get()).status().code(), absl::StatusCode::kUnavailable);
}

TEST(NotifyChannel, RefusesAnythingElse) {
  absl::StatusOr<std::pair<UniqueFd, UniqueFd>> pair = NotifyChannelPair();
  ASSERT_TRUE(pair.ok());
  ASSERT_EQ(send(pair->second.get(), "hello", 5, 0), 5);
  EXPECT_EQ(ReceiveNotifyFd(pair->first.get()).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ccsandbox::launcher
