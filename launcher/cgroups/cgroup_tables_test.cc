// Which hierarchy the launcher picks, from the mount table and its own /proc/self/cgroup.
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "launcher/cgroups/cgroup.h"

namespace ccsandbox::launcher {
namespace {

// This machine's tables: v1 controllers, a hybrid unified mount without controllers.
constexpr char kHybridMounts[] =
    "30 25 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "32 30 0:28 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "33 30 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "34 30 0:30 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "35 30 0:31 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "36 30 0:32 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "37 30 0:33 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr char kHybridSelf[] =
    "9:name=systemd:/\n8:pids:/\n6:freezer:/\n4:memory:/process_api/abc\n2:cpuacct:/\n1:cpu:/\n"
    "0::/\n";

std::string NoFile(const std::string&) { return ""; }

TEST(CgroupTables, AHybridHostUsesTheV1ControllersBelowItsOwnCgroups) {
  absl::StatusOr<CgroupHierarchy> tree =
      CgroupHierarchy::FromTables(kHybridMounts, kHybridSelf, "ccsandbox", NoFile);
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->version(), CgroupVersion::kV1);
  std::map<std::string, std::string> by_controller;
  for (const CgroupDir& root : tree->roots()) {
    for (const std::string& c : root.controllers) by_controller[c] = root.path;
  }
  EXPECT_EQ(by_controller["memory"], "/sys/fs/cgroup/memory/process_api/abc/ccsandbox");
  EXPECT_EQ(by_controller["pids"], "/sys/fs/cgroup/pids/ccsandbox");
  EXPECT_EQ(by_controller["cpu"], "/sys/fs/cgroup/cpu/ccsandbox");
  EXPECT_EQ(by_controller["cpuacct"], "/sys/fs/cgroup/cpuacct/ccsandbox");
  EXPECT_EQ(by_controller["freezer"], "/sys/fs/cgroup/freezer/ccsandbox");
}

TEST(CgroupTables, CoMountedV1ControllersShareADirectory) {
  absl::StatusOr<CgroupHierarchy> tree = CgroupHierarchy::FromTables(
      "31 30 0:27 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
      "33 30 0:29 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
      "35 30 0:31 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
      "3:cpu,cpuacct:/user.slice\n4:memory:/user.slice\n8:pids:/user.slice\n", "cc", NoFile);
  ASSERT_TRUE(tree.ok()) << tree.status();
  ASSERT_EQ(tree->roots().size(), 3u);
  EXPECT_EQ(tree->roots()[0].path, "/sys/fs/cgroup/cpu,cpuacct/user.slice/cc");
  EXPECT_EQ(tree->roots()[0].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
}

TEST(CgroupTables, AUnifiedHierarchyWithTheControllersIsV2) {
  absl::StatusOr<CgroupHierarchy> tree = CgroupHierarchy::FromTables(
      "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
      "0::/system.slice/ccsandbox.service\n", "runs", [](const std::string& path) {
        return path == "/sys/fs/cgroup/cgroup.controllers" ? "cpuset cpu io memory pids\n" : "";
      });
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->version(), CgroupVersion::kV2);
  ASSERT_EQ(tree->roots().size(), 1u);
  EXPECT_EQ(tree->roots()[0].path, "/sys/fs/cgroup/system.slice/ccsandbox.service/runs");
}

TEST(CgroupTables, NoMemoryOrPidsControllerIsUnavailableSayingWhich) {
  absl::StatusOr<CgroupHierarchy> tree = CgroupHierarchy::FromTables(
      "35 30 0:31 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
      "37 30 0:33 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
      "8:pids:/\n0::/\n", "cc", NoFile);
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(tree.status().message().find("'memory'"), std::string::npos) << tree.status();
  EXPECT_FALSE(CgroupHierarchy::FromTables("", "", "cc", NoFile).ok());
}

// --cgroup-fs: only file systems mounted at or below it count; an empty directory has none.
TEST(CgroupTables, OnlyMountsBelowTheGivenRootCount) {
  absl::StatusOr<CgroupHierarchy> below =
      CgroupHierarchy::FromTables(kHybridMounts, kHybridSelf, "cc", NoFile, "/sys/fs/cgroup");
  ASSERT_TRUE(below.ok()) << below.status();
  EXPECT_EQ(below->roots().size(), 5u);
  absl::StatusOr<CgroupHierarchy> empty =
      CgroupHierarchy::FromTables(kHybridMounts, kHybridSelf, "cc", NoFile, "/tmp/empty");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(empty.status().message().find("below /tmp/empty"), std::string::npos) << empty.status();
  // A prefix of a name is not a directory above it.
  EXPECT_FALSE(
      CgroupHierarchy::FromTables(kHybridMounts, kHybridSelf, "cc", NoFile, "/sys/fs/cgr").ok());
}

}  // namespace
}  // namespace ccsandbox::launcher
