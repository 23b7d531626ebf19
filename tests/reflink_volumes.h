// Test support: a file system of a chosen kind, made and mounted by the test (as root), gone when
// the object goes. The copy-on-write worktree tests and the worktree benchmark run on real
// volumes, not on whatever /tmp happens to be.
//
//   absl::StatusOr<std::unique_ptr<TestVolume>> xfs =
//       TestVolume::Make(TestVolume::Kind::kXfsReflink);
//   if (absl::IsFailedPrecondition(xfs.status())) CCSANDBOX_SKIP_OR_FAIL_IN_CI(...);
//   CloneCheckout(checkout, (*xfs)->path() + "/clone");
//
// - XFS (`mkfs.xfs -m reflink=1`), btrfs and ext4 are sparse images in their own temp dir under
//   /var/tmp, on a loop device set up with autoclear; tmpfs is a plain tmpfs mount.
// - The first Make moves this process into a private mount namespace (a slave of the host's), so
//   the mounts are seen by this process and its children only, and a test killed by a timeout
//   leaves no mount behind: the namespace dies with it, and the loop device with the mount. In a
//   process that already runs threads (unshare refuses) the mounts are made in the host's
//   namespace and only the destructor removes them.
// - The destructor unmounts, waits until the loop device is released (detaching it itself if
//   the kernel has not) and removes the image and the temp dir.
// - FAILED_PRECONDITION when the host lacks what the kind needs (root, the mkfs tool, loop
//   devices, the file system in the kernel): the caller skips, or fails under CI. Anything else
//   is INTERNAL.
#ifndef CCSANDBOX_TESTS_REFLINK_VOLUMES_H_
#define CCSANDBOX_TESTS_REFLINK_VOLUMES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ccsandbox::testing {

class TestVolume {
 public:
  enum class Kind { kXfsReflink, kBtrfs, kExt4, kTmpfs };
  static constexpr uint64_t kDefaultBytes = uint64_t{1} << 30;

  // A fresh, empty file system of `kind`, `bytes` large (sparse: the host's disk pays for what
  // is written only).
  static absl::StatusOr<std::unique_ptr<TestVolume>> Make(Kind kind,
                                                          uint64_t bytes = kDefaultBytes);
  ~TestVolume();
  TestVolume(const TestVolume&) = delete;
  TestVolume& operator=(const TestVolume&) = delete;

  // The mounted file system's root (empty, owned by root, mode 0755).
  const std::string& path() const { return mount_point_; }
  Kind kind() const { return kind_; }
  // The backing image and its loop device ("" for tmpfs).
  const std::string& image() const { return image_; }
  const std::string& loop_device() const { return loop_device_; }

  // Bytes in use on the file system (statfs: total - free blocks), after syncfs so delayed
  // allocation and btrfs's transaction are accounted. The difference of two readings is what
  // the work in between cost on disk.
  absl::StatusOr<uint64_t> UsedBytes() const;

  // "xfs-reflink", "btrfs", "ext4", "tmpfs": for test names.
  static const char* KindName(Kind kind);

 private:
  TestVolume() = default;
  Kind kind_ = Kind::kTmpfs;
  std::string dir_;
  std::string image_;
  std::string mount_point_;
  std::string loop_device_;
  bool mounted_ = false;
};

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_REFLINK_VOLUMES_H_
