#include "workspace/file_system_type.h"

#include <linux/magic.h>

#include "gtest/gtest.h"

namespace ccsandbox::workspace {
namespace {

TEST(FileSystemTypeTest, NamesTheTypesOperatorsMeet) {
  struct Case {
    uint64_t magic;
    const char* name;
  };
  constexpr Case kCases[] = {
      {XFS_SUPER_MAGIC, "xfs"}, {BTRFS_SUPER_MAGIC, "btrfs"},       {EXT4_SUPER_MAGIC, "ext4"},
      {TMPFS_MAGIC, "tmpfs"},   {OVERLAYFS_SUPER_MAGIC, "overlay"}, {NFS_SUPER_MAGIC, "nfs"},
      {0x2fc12fc1, "zfs"},      {0x1234abcd, "type 0x1234abcd"},
  };
  for (const Case& c : kCases) EXPECT_EQ(FileSystemTypeName(c.magic), c.name) << c.name;
}

TEST(FileSystemTypeTest, OfAPath) {
  EXPECT_TRUE(FileSystemTypeOf("/").ok());
  absl::StatusOr<std::string> missing = FileSystemTypeOf("/nonexistent/ccsandbox");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ccsandbox::workspace
