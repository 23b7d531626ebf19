#include "tests/reflink_volumes.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "tests/poll_until.h"
#include "tests/run_tool.h"

namespace ccsandbox::testing {
namespace {

struct KindRow {
  TestVolume::Kind kind;
  const char* name;
  const char* fs_type;            // for mount(2)
  std::vector<std::string> mkfs;  // empty: no image (tmpfs)
  const char* package;
};

const std::vector<KindRow>& Kinds() {
  static const std::vector<KindRow>* const kinds = new std::vector<KindRow>{
      {TestVolume::Kind::kXfsReflink,
       "xfs-reflink",
       "xfs",
       {"mkfs.xfs", "-q", "-f", "-m", "reflink=1"},
       "xfsprogs"},
      {TestVolume::Kind::kBtrfs, "btrfs", "btrfs", {"mkfs.btrfs", "-q", "-f"}, "btrfs-progs"},
      {TestVolume::Kind::kExt4, "ext4", "ext4", {"mkfs.ext4", "-q", "-F"}, "e2fsprogs"},
      {TestVolume::Kind::kTmpfs, "tmpfs", "tmpfs", {}, ""},
  };
  return *kinds;
}

const KindRow& RowOf(TestVolume::Kind kind) {
  for (const KindRow& row : Kinds()) {
    if (row.kind == kind) return row;
  }
  return Kinds().back();
}

// Once per process: a private mount namespace that still sees the host's mounts, so our mounts
// stay ours and vanish with the process. Refused (EINVAL) once the process runs threads.
void EnterPrivateMountNamespace() {
  static const bool entered = [] {
    if (unshare(CLONE_NEWNS) != 0) return false;
    // Without this the new namespace shares propagation with the host's and sends it our mounts.
    if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) abort();
    return true;
  }();
  (void)entered;
}

// Attaches `image` to a free loop device with autoclear: the device detaches itself when its
// last user (the mounted file system, once `loop` is closed) goes away.
absl::StatusOr<std::string> AttachLoop(const std::string& image, UniqueFd& loop) {
  UniqueFd control(open("/dev/loop-control", O_RDWR | O_CLOEXEC));
  if (!control.valid()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no loop devices here (/dev/loop-control: ", strerror(errno), ")"));
  }
  UniqueFd backing(open(image.c_str(), O_RDWR | O_CLOEXEC));
  if (!backing.valid()) return absl::ErrnoToStatus(errno, absl::StrCat("open ", image));
  for (int attempt = 0; attempt < 50; ++attempt) {
    const int number = ioctl(control.get(), LOOP_CTL_GET_FREE);
    if (number < 0) return absl::ErrnoToStatus(errno, "LOOP_CTL_GET_FREE");
    const std::string device = absl::StrCat("/dev/loop", number);
    UniqueFd candidate(open(device.c_str(), O_RDWR | O_CLOEXEC));
    if (!candidate.valid()) return absl::ErrnoToStatus(errno, absl::StrCat("open ", device));
    loop_config config{};
    config.fd = static_cast<uint32_t>(backing.get());
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    strncpy(reinterpret_cast<char*>(config.info.lo_file_name), image.c_str(), LO_NAME_SIZE - 1);
    if (ioctl(candidate.get(), LOOP_CONFIGURE, &config) == 0) {
      loop = std::move(candidate);
      return device;
    }
    if (errno != EBUSY) return absl::ErrnoToStatus(errno, absl::StrCat("LOOP_CONFIGURE ", device));
  }
  return absl::InternalError("no free loop device after 50 tries");
}

// Whether `device` is still bound to the file with inode `image_ino`.
bool LoopStillBound(const std::string& device, ino_t image_ino) {
  UniqueFd fd(open(device.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  loop_info64 info{};
  if (ioctl(fd.get(), LOOP_GET_STATUS64, &info) != 0) return false;  // ENXIO: free
  return info.lo_inode == image_ino;
}

}  // namespace

const char* TestVolume::KindName(Kind kind) { return RowOf(kind).name; }

absl::StatusOr<std::unique_ptr<TestVolume>> TestVolume::Make(Kind kind, uint64_t bytes) {
  const KindRow& row = RowOf(kind);
  if (geteuid() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("making a ", row.name, " volume needs root (mount, loop devices)"));
  }
  EnterPrivateMountNamespace();
  std::unique_ptr<TestVolume> volume(new TestVolume());
  volume->kind_ = kind;
  char dir[] = "/var/tmp/ccs-vol.XXXXXX";
  if (mkdtemp(dir) == nullptr) return absl::ErrnoToStatus(errno, "mkdtemp /var/tmp/ccs-vol");
  volume->dir_ = dir;
  volume->mount_point_ = volume->dir_ + "/mnt";
  if (mkdir(volume->mount_point_.c_str(), 0755) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("mkdir ", volume->mount_point_));
  }
  if (row.mkfs.empty()) {
    const std::string options = absl::StrCat("size=", bytes, ",mode=0755");
    if (mount("tmpfs", volume->mount_point_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      return absl::ErrnoToStatus(errno, "mount tmpfs");
    }
    volume->mounted_ = true;
    return volume;
  }
  volume->image_ = volume->dir_ + "/image";
  {
    UniqueFd image(open(volume->image_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!image.valid() || ftruncate(image.get(), static_cast<off_t>(bytes)) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("sparse image ", volume->image_));
    }
  }
  std::vector<std::string> mkfs = row.mkfs;
  mkfs.push_back(volume->image_);
  if (absl::StatusOr<std::string> made = RunTool(mkfs); !made.ok()) {
    if (absl::IsNotFound(made.status())) {
      return absl::FailedPreconditionError(
          absl::StrCat(made.status().message(), "; install: apt-get install ", row.package));
    }
    return made.status();
  }
  UniqueFd loop;
  absl::StatusOr<std::string> device = AttachLoop(volume->image_, loop);
  if (!device.ok()) return device.status();
  volume->loop_device_ = *device;
  if (mount(device->c_str(), volume->mount_point_.c_str(), row.fs_type, 0, nullptr) != 0) {
    if (errno == ENODEV) {
      return absl::FailedPreconditionError(
          absl::StrCat("the kernel has no ", row.fs_type, " file system (mount: ENODEV)"));
    }
    return absl::ErrnoToStatus(errno, absl::StrCat("mount ", *device, " (", row.fs_type, ")"));
  }
  volume->mounted_ = true;
  return volume;
}

absl::StatusOr<uint64_t> TestVolume::UsedBytes() const {
  UniqueFd root(open(mount_point_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return absl::ErrnoToStatus(errno, absl::StrCat("open ", mount_point_));
  if (syncfs(root.get()) != 0) return absl::ErrnoToStatus(errno, "syncfs");
  struct statfs fs;
  if (fstatfs(root.get(), &fs) != 0) return absl::ErrnoToStatus(errno, "fstatfs");
  return (static_cast<uint64_t>(fs.f_blocks) - static_cast<uint64_t>(fs.f_bfree)) *
         static_cast<uint64_t>(fs.f_frsize);
}

TestVolume::~TestVolume() {
  struct stat image_st {};
  const bool have_image = !image_.empty() && stat(image_.c_str(), &image_st) == 0;
  if (mounted_ && umount2(mount_point_.c_str(), 0) != 0) {
    // Busy (a process of the test still in it): detach now, released when it lets go.
    umount2(mount_point_.c_str(), MNT_DETACH);
  }
  if (!loop_device_.empty() && have_image) {
    // Autoclear detaches the device when the unmounted file system lets go of it.
    if (!PollUntil([&] { return !LoopStillBound(loop_device_, image_st.st_ino); }, absl::Seconds(5),
                   "the loop device to detach")) {
      UniqueFd fd(open(loop_device_.c_str(), O_RDONLY | O_CLOEXEC));
      if (fd.valid()) ioctl(fd.get(), LOOP_CLR_FD, 0);
    }
  }
  if (!image_.empty()) unlink(image_.c_str());
  if (!mount_point_.empty()) rmdir(mount_point_.c_str());
  if (!dir_.empty()) rmdir(dir_.c_str());
}

}  // namespace ccsandbox::testing
