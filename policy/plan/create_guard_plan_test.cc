#include "policy/plan/create_guard_plan.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

TEST(FreeCreateDirs, TmpUnlessAWritableMountOverlapsIt) {
  EXPECT_EQ(FreeCreateDirs({}), std::vector<std::string>{"/tmp"});
  EXPECT_EQ(FreeCreateDirs(
                {{"/work", "/home/u/w", true}, {"/tmp/ro", "/data", false}}),
            std::vector<std::string>{"/tmp"});
  EXPECT_TRUE(FreeCreateDirs({{"/tmp/w", "/tmp/w", true}}).empty());
  EXPECT_TRUE(FreeCreateDirs({{"/tmp", "/tmp", true}}).empty());
  EXPECT_TRUE(FreeCreateDirs({{"/", "/srv/root", true}}).empty());
  EXPECT_EQ(FreeCreateDirs({{"/tmpx", "/tmpx", true}}),
            std::vector<std::string>{"/tmp"});
}

TEST(CreateGuardShimArgs, ChannelThenFreeDirsThenWritableMounts) {
  EXPECT_EQ(
      CreateGuardShimArgs(5, {"/tmp"},
                          {{"/work", "/h/w", true},
                           {"/usr", "/usr", false},
                           {"/state", "/h/s", true}}),
      (std::vector<std::string>{"--create-guard=5", "--free-create=/tmp",
                                "--writable=/work", "--writable=/state"}));
}

// A writable bind beneath /tmp: /tmp cannot be free, but the command's own sockets there work.
TEST(CreateGuardShimArgs, SocketsStayFreeInThePrivateTmpWhenABindLiesBeneathIt) {
  const std::vector<GuardMount> mounts = {{"/tmp/ws", "/tmp/ws", true}};
  EXPECT_EQ(CreateGuardShimArgs(5, FreeCreateDirs(mounts), mounts),
            (std::vector<std::string>{"--create-guard=5", "--writable=/tmp/ws",
                                      "--free-sockets=/tmp"}));
}

TEST(HostPathFor, LongestMountWins) {
  const std::vector<GuardMount> mounts = {{"/work", "/home/u/proj", true},
                                          {"/work/sub", "/data/sub", true}};
  EXPECT_EQ(HostPathFor("/work/a/.env", mounts), "/home/u/proj/a/.env");
  EXPECT_EQ(HostPathFor("/work/sub/x.pem", mounts), "/data/sub/x.pem");
  EXPECT_EQ(HostPathFor("/work", mounts), "/home/u/proj");
  EXPECT_EQ(HostPathFor("/workx/y.key", mounts), "/workx/y.key");
  EXPECT_EQ(HostPathFor("/dev/shm/y.key", mounts), "/dev/shm/y.key");
}

}  // namespace
}  // namespace ccsandbox::policy
