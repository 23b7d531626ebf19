#include "workspace/file_system_type.h"

#include <errno.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ccsandbox::workspace {
namespace {

struct TypeRow {
  uint64_t magic;
  const char* name;
};

// From linux/magic.h, plus the file systems it does not list (zfs, bcachefs, ocfs2, ceph).
constexpr TypeRow kTypes[] = {
    {XFS_SUPER_MAGIC, "xfs"},
    {BTRFS_SUPER_MAGIC, "btrfs"},
    {EXT4_SUPER_MAGIC, "ext4"},  // ext2 and ext3 share it
    {TMPFS_MAGIC, "tmpfs"},
    {RAMFS_MAGIC, "ramfs"},
    {OVERLAYFS_SUPER_MAGIC, "overlay"},
    {F2FS_SUPER_MAGIC, "f2fs"},
    {NFS_SUPER_MAGIC, "nfs"},
    {SMB_SUPER_MAGIC, "smb"},
    {0xff534d42, "cifs"},
    {0xfe534d42, "smb2"},
    {FUSE_SUPER_MAGIC, "fuse"},
    {V9FS_MAGIC, "9p"},
    {MSDOS_SUPER_MAGIC, "vfat"},
    {EXFAT_SUPER_MAGIC, "exfat"},
    {SQUASHFS_MAGIC, "squashfs"},
    {0x2fc12fc1, "zfs"},
    {0xca451a4e, "bcachefs"},
    {0x7461636f, "ocfs2"},
    {0x00c36400, "ceph"},
};

}  // namespace

std::string FileSystemTypeName(uint64_t f_type) {
  for (const TypeRow& row : kTypes) {
    if (row.magic == f_type) return row.name;
  }
  return absl::StrFormat("type 0x%x", f_type);
}

absl::StatusOr<std::string> FileSystemTypeOf(const std::string& path) {
  struct statfs fs;
  if (statfs(path.c_str(), &fs) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("statfs '", path, "'"));
  }
  return FileSystemTypeName(static_cast<uint64_t>(fs.f_type));
}

}  // namespace ccsandbox::workspace
