#include "policy/plan/create_guard_plan.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

TEST(FreeCreateDirs, TmpUnlessAWritableMountOverlapsIt) {
  EXPECT_EQ(FreeCreateDirs({}), std::vector<std::string>{"/tmp"});
  EXPECT_EQ(FreeCreateDirs({{"/work", "/home/u/w", true}, {"/tmp/ro", "/data", false}}),
            std::vector<std::string>{"/tmp"});
  EXPECT_TRUE(FreeCreateDirs({{"/tmp/w", "/tmp/w", true}}).empty());
  EXPECT_TRUE(FreeCreateDirs({{"/tmp", "/tmp", true}}).empty());
  EXPECT_TRUE(FreeCreateDirs({{"/", "/srv/root", true}}).empty());
  EXPECT_EQ(FreeCreateDirs({{"/tmpx", "/tmpx", true}}), std::vector<std::string>{"/tmp"});
}

TEST(ShimGuardDirsOf, FreeDirsThenWritableMountsInOrder) {
  const ShimGuardDirs dirs =
      ShimGuardDirsOf({{"/work", "/h/w", true}, {"/usr", "/usr", false}, {"/state", "/h/s", true}});
  EXPECT_EQ(dirs.free_create, std::vector<std::string>{"/tmp"});
  EXPECT_EQ(dirs.writable, (std::vector<std::string>{"/work", "/state"}));
  EXPECT_TRUE(dirs.free_sockets.empty());
}

// A writable bind beneath /tmp: /tmp cannot be free, but the command's own sockets there work.
TEST(ShimGuardDirsOf, SocketsStayFreeInThePrivateTmpWhenABindLiesBeneathIt) {
  const ShimGuardDirs dirs = ShimGuardDirsOf({{"/tmp/ws", "/tmp/ws", true}});
  EXPECT_TRUE(dirs.free_create.empty());
  EXPECT_EQ(dirs.writable, std::vector<std::string>{"/tmp/ws"});
  EXPECT_EQ(dirs.free_sockets, std::vector<std::string>{"/tmp"});
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
