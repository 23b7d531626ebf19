#include "launcher/create_guard/in_sandbox.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccsandbox::launcher {
namespace {

using ::testing::HasSubstr;

// The shape bwrap leaves: a tmpfs root, binds, its own tmpfs at /tmp.
constexpr char kMountInfo[] =
    "66 42 0:39 /newroot / rw,nosuid,nodev,relatime - tmpfs tmpfs rw,uid=1000\n"
    "67 66 254:0 /usr /usr ro,nosuid,nodev,relatime - ext4 /dev/vda rw\n"
    "68 66 0:40 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
    "77 66 0:43 / /tmp rw,nosuid,nodev,relatime - tmpfs tmpfs rw,mode=755\n"
    "78 66 254:0 /home/u/my\\040proj /work rw,nosuid,nodev,relatime - ext4 "
    "/dev/vda rw\n"
    "79 77 254:0 /data /tmp/ro ro,nosuid,nodev,relatime shared:5 - ext4 "
    "/dev/vda rw\n";

// Socket dirs (--free-sockets) need only be the sandbox's own tmpfs: a writable bind may lie
// beneath them.
TEST(CheckFreeDirs, SocketDirsMayHoldWritableBinds) {
  const std::string with_bind = std::string(kMountInfo) +
                                "80 77 254:0 /srv/ws /tmp/ws rw,nosuid,nodev,relatime - ext4 "
                                "/dev/vda rw\n";
  EXPECT_FALSE(CheckFreeDirs({"/tmp"}, {"/tmp/ws"}, with_bind).ok());
  EXPECT_TRUE(CheckFreeDirs({"/tmp"}, {}, with_bind, /*allow_writable_beneath=*/true).ok());
  EXPECT_FALSE(CheckFreeDirs({"/work"}, {}, with_bind, /*allow_writable_beneath=*/true).ok());
}

TEST(CheckFreeDirs, TheSandboxesOwnTmpfsIsSafe) {
  EXPECT_TRUE(CheckFreeDirs({"/tmp"}, {"/work"}, kMountInfo).ok());
  EXPECT_TRUE(CheckFreeDirs({}, {"/work"}, kMountInfo).ok());
}

TEST(CheckFreeDirs, RefusesWhatWouldLetNamesOutliveTheSandbox) {
  struct Case {
    std::vector<std::string> free, writable;
    std::string mounts, why;
  };
  const Case cases[] = {
      {{"/tmp"}, {"/tmp/w"}, kMountInfo, "overlaps the writable mount /tmp/w"},
      {{"/tmp"}, {"/tmp"}, kMountInfo, "overlaps the writable mount /tmp"},
      {{"/work"}, {}, kMountInfo, "is a ext4 mount of /home/u/my proj"},
      {{"/tmp/x"}, {}, kMountInfo, "is not a tmpfs mount point"},
      {{"/"}, {}, kMountInfo, "is a tmpfs mount of /newroot"},
      {{"/tmp"},
       {},
       std::string(kMountInfo) + "80 77 254:0 /home/u/w /tmp/w rw,nosuid,nodev,relatime - ext4 "
                                 "/dev/vda rw\n",
       "has the read-write mount /tmp/w beneath it"},
      // A host tmpfs bound over /tmp: tmpfs, but not the root of its own.
      {{"/tmp"},
       {},
       std::string(kMountInfo) + "81 77 0:30 /host-tmp /tmp rw,relatime - tmpfs tmpfs rw\n",
       "is a tmpfs mount of /host-tmp"},
  };
  for (const Case& c : cases) {
    absl::Status status = CheckFreeDirs(c.free, c.writable, c.mounts);
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << c.why;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.why));
  }
}

}  // namespace
}  // namespace ccsandbox::launcher
