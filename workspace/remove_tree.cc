#include "workspace/remove_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "base/unique_fd.h"
#include "workspace/directory_listing.h"

namespace ccsandbox::workspace {
namespace {

// How deep the walk descends before moving what lies deeper up to the top of the tree: at most
// this many directories are open at once, whatever the tree's depth.
constexpr int kMaxDepth = 256;

absl::Status Errno(int error, const std::string& path, absl::string_view what) {
  return absl::ErrnoToStatus(error, absl::StrCat("removing '", path, "': ", what));
}

// Whether `name` in `dir` is the root of a mount (a bind or another file system).
absl::StatusOr<bool> IsMountRoot(int dir, const char* name, const std::string& path) {
  struct statx stx;
  if (statx(dir, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE, &stx) != 0) {
    return Errno(errno, path, "statx");
  }
  if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("removing '", path, "': the kernel does not tell mount points (statx)"));
  }
  return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

// Opens a directory to empty it; one of ours we cannot read (0000, 0300) is made 0700 first
// (AT_SYMLINK_NOFOLLOW: never the mode of what a symlink points at).
UniqueFd OpenDirectory(int parent, const char* name) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(openat(parent, name, kFlags));
  if (fd.valid() || errno != EACCES) return fd;
  if (fchmodat(parent, name, 0700, AT_SYMLINK_NOFOLLOW) != 0) {
    errno = EACCES;
    return fd;
  }
  return UniqueFd(openat(parent, name, kFlags));
}

// One walk over a tree: the top's fd (where deeper directories are moved), how many were moved.
struct Walk {
  int top;
  uint64_t moved = 0;
};

// Moves the directory `name` in `dir` (at `path`) up into the top under a new hidden name: it is
// emptied by a later pass from there, so an agent's chain of any depth is removed.
absl::Status MoveToTop(int dir, const std::string& name, const std::string& path, Walk& walk) {
  UniqueFd sub = OpenDirectory(dir, name.c_str());
  if (!sub.valid()) return Errno(errno, path, "open");
  // Moving a directory to another parent rewrites its "..": it must be writable.
  if (fchmod(sub.get(), 0700) != 0 && errno != EPERM) return Errno(errno, path, "fchmod 0700");
  for (;;) {
    const std::string to = absl::StrCat(".deep-", walk.moved++);
    if (renameat2(dir, name.c_str(), walk.top, to.c_str(), RENAME_NOREPLACE) == 0) {
      return absl::OkStatus();
    }
    if (errno != EEXIST) return Errno(errno, path, "move up");
  }
}

// Empties the directory open as `dir` (at `path`, `depth` levels below the top).
absl::Status Empty(int dir, const std::string& path, int depth, Walk& walk) {
  struct stat st;
  if (fstat(dir, &st) != 0) return Errno(errno, path, "fstat");
  if ((st.st_mode & 0700) != 0700 && fchmod(dir, 0700) != 0 && errno != EPERM) {
    return Errno(errno, path, "fchmod 0700");
  }
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir);
  if (!names.ok()) {
    return absl::Status(names.status().code(),
                        absl::StrCat("removing '", path, "': ", names.status().message()));
  }
  for (const std::string& name : *names) {
    const std::string child = absl::StrCat(path, "/", name);
    // Unlinking first saves a stat per file; Linux answers EISDIR for a directory.
    if (unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT) continue;
    if (errno != EISDIR) return Errno(errno, child, "unlink");
    absl::StatusOr<bool> mount_root = IsMountRoot(dir, name.c_str(), child);
    if (!mount_root.ok()) return mount_root.status();
    // A bind or volume mounted here leads into a tree that is not ours to remove.
    if (*mount_root) {
      return absl::FailedPreconditionError(
          absl::StrCat("removing '", child, "': it is a mount point; unmount it first"));
    }
    if (depth >= kMaxDepth) {
      if (absl::Status moved = MoveToTop(dir, name, child, walk); !moved.ok()) return moved;
      continue;
    }
    UniqueFd sub = OpenDirectory(dir, name.c_str());
    if (!sub.valid()) return Errno(errno, child, "open");
    if (absl::Status emptied = Empty(sub.get(), child, depth + 1, walk); !emptied.ok()) {
      return emptied;
    }
    sub.Reset();
    if (unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      return Errno(errno, child, "rmdir");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RemoveTree(const std::string& path) {
  if (absl::Status normal = CheckNormalizedAbsolute("path", path); !normal.ok()) return normal;
  if (path == "/") return absl::InvalidArgumentError("path: '/' is never removed");
  const std::string parent_path = ParentPath(path);
  const std::string name = path.substr(path.rfind('/') + 1);
  UniqueFd parent(open(parent_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent.valid()) {
    if (errno == ENOENT) return absl::OkStatus();
    return Errno(errno, parent_path, "open");
  }
  if (unlinkat(parent.get(), name.c_str(), 0) == 0 || errno == ENOENT) return absl::OkStatus();
  if (errno != EISDIR) return Errno(errno, path, "unlink");
  absl::StatusOr<bool> mount_root = IsMountRoot(parent.get(), name.c_str(), path);
  if (!mount_root.ok()) return mount_root.status();
  if (*mount_root) {
    return absl::FailedPreconditionError(
        absl::StrCat("removing '", path, "': it is a mount point; unmount it first"));
  }
  UniqueFd top = OpenDirectory(parent.get(), name.c_str());
  if (!top.valid()) return Errno(errno, path, "open");
  // Each pass empties the top down to kMaxDepth and moves what lies deeper up into it; the
  // next pass takes those. A pass that moved nothing left the top empty.
  for (;;) {
    Walk walk{top.get()};
    if (absl::Status emptied = Empty(top.get(), path, 1, walk); !emptied.ok()) return emptied;
    if (walk.moved == 0) break;
  }
  top.Reset();
  if (unlinkat(parent.get(), name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return Errno(errno, path, "rmdir");
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox::workspace
