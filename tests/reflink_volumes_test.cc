#include "tests/reflink_volumes.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "tests/run_tool.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {
namespace {

struct Case {
  TestVolume::Kind kind;
  uint64_t magic;
  bool reflink;
};

std::string LoopDevices() {
  absl::StatusOr<std::string> listed = RunTool({"losetup", "-a"});
  return listed.ok() ? *listed : listed.status().ToString();
}

// The lines of `losetup -a` backed by this fixture's images (other loop users come and go).
std::vector<std::string> FixtureLoopDevices() {
  std::vector<std::string> ours;
  for (absl::string_view line : absl::StrSplit(LoopDevices(), '\n')) {
    if (absl::StrContains(line, "/var/tmp/ccs-vol.")) ours.emplace_back(line);
  }
  return ours;
}

std::string MountInfo() {
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TestVolumeTest : public ::testing::TestWithParam<Case> {};

TEST_P(TestVolumeTest, MountsTheKindAndLeavesNothingBehind) {
  const Case& c = GetParam();
  const std::vector<std::string> before = FixtureLoopDevices();
  std::string image, dir, device;
  {
    absl::StatusOr<std::unique_ptr<TestVolume>> volume = TestVolume::Make(c.kind);
    if (absl::IsFailedPrecondition(volume.status())) {
      CCSANDBOX_SKIP_OR_FAIL_IN_CI(volume.status().ToString());
    }
    ASSERT_TRUE(volume.ok()) << volume.status();
    const std::string& root = (*volume)->path();
    image = (*volume)->image();
    device = (*volume)->loop_device();
    dir = root.substr(0, root.rfind('/'));
    struct statfs fs;
    ASSERT_EQ(statfs(root.c_str(), &fs), 0);
    EXPECT_EQ(static_cast<uint64_t>(fs.f_type), c.magic);
    EXPECT_TRUE(absl::StrContains(MountInfo(), " " + root + " "));
    if (!image.empty()) {
      EXPECT_TRUE(absl::StrContains(LoopDevices(), image)) << LoopDevices();
      EXPECT_TRUE(absl::StartsWith(device, "/dev/loop")) << device;
    }

    // The kind's point: whether the kernel clones files on it.
    UniqueFd a(open((root + "/a").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    UniqueFd b(open((root + "/b").c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    ASSERT_TRUE(a.valid() && b.valid());
    ASSERT_EQ(write(a.get(), "data", 4), 4);
    const int cloned = ioctl(b.get(), FICLONE, a.get());
    if (c.reflink) {
      EXPECT_EQ(cloned, 0) << strerror(errno);
    } else {
      EXPECT_EQ(cloned, -1);
      EXPECT_EQ(errno, EOPNOTSUPP) << strerror(errno);
    }
  }
  EXPECT_FALSE(absl::StrContains(MountInfo(), dir));
  const std::string after = LoopDevices();
  if (!image.empty()) {
    EXPECT_FALSE(absl::StrContains(after, image)) << after;
  }
  EXPECT_EQ(FixtureLoopDevices(), before);
  struct stat st;
  EXPECT_NE(lstat(dir.c_str(), &st), 0) << dir << " is left behind";
}

INSTANTIATE_TEST_SUITE_P(Kinds, TestVolumeTest,
                         ::testing::Values(Case{TestVolume::Kind::kXfsReflink, XFS_SUPER_MAGIC,
                                                true},
                                           Case{TestVolume::Kind::kBtrfs, BTRFS_SUPER_MAGIC, true},
                                           Case{TestVolume::Kind::kExt4, EXT4_SUPER_MAGIC, false},
                                           Case{TestVolume::Kind::kTmpfs, TMPFS_MAGIC, false}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = TestVolume::KindName(info.param.kind);
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace ccsandbox::testing
