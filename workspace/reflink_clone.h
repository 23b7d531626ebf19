// A copy-on-write clone of a git checkout: every regular file shares its blocks with the
// original through the file system's reflink (ioctl FICLONE), so a conversation's worktree costs
// metadata, not a copy of the repository. There is no byte-copy fallback: where the kernel
// cannot clone, provisioning fails (spec: "A copy-on-write worktree of its own").
//
//   absl::StatusOr<GitCheckout> checkout = InspectCheckout("repository", "/home/u/proj");
//   absl::StatusOr<CloneStats> stats = CloneCheckout(*checkout, "/var/lib/cc/c1/repos/proj");
//
// What the clone holds:
// - Directories, symlinks (as symlinks, never followed) and FIFOs recreated, regular files
//   cloned; sockets and devices skipped (listed in `skipped`). Hard links become separate clones.
// - Modes and times (atime, mtime) preserved; a directory's after its children. Set-uid and
//   set-gid bits are stripped. Everything is owned by this process's uid.
// - A main checkout's .git as it is, without .git/worktrees/ (other checkouts' metadata, pointing
//   at host paths). A linked worktree gets a standalone .git directory: the repository's shared
//   paths from the common dir (minus worktrees/), and the worktree's own (HEAD, index, logs/HEAD,
//   ORIG_HEAD, ...: everything in its git dir but `commondir` and `gitdir`), so git works in the
//   clone and never writes into the registered repository. Nested .git files (submodules) are
//   copied as they are.
//
// The checkout is only read: opened read-only (O_NOATIME where permitted), never chmod-ed or
// touched. Directories are 0700 until their contents are in place.
//
// Errors (the kernel's answer decides):
// - FICLONE says EXDEV: FAILED_PRECONDITION, the data directory is on a different volume from
//   the repository; EOPNOTSUPP, EINVAL, ENOTTY, ENOSYS: FAILED_PRECONDITION, the destination's
//   file system (named: xfs, ext4, tmpfs, ...) does not support reflink.
// - `destination` relative or not normalised, or inside the checkout or its git directories:
//   INVALID_ARGUMENT; its parent missing: FAILED_PRECONDITION; it exists: ALREADY_EXISTS.
// - The checkout's root or git directories leading elsewhere than when it was inspected (a
//   component swapped for a symlink since; the clone would read another repository): ABORTED.
// - A tree deeper than 256 levels: FAILED_PRECONDITION. Other errors: the errno's status, naming
//   the path in the clone.
// On any failure everything created under `destination`, and `destination` itself, is removed
// before the call returns: nothing half-provisioned is left behind.
#ifndef CCSANDBOX_WORKSPACE_REFLINK_CLONE_H_
#define CCSANDBOX_WORKSPACE_REFLINK_CLONE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "workspace/git_checkout.h"

namespace ccsandbox::workspace {

struct CloneStats {
  uint64_t files = 0;        // regular files cloned (FIFOs are recreated but not counted)
  uint64_t directories = 0;  // directories created, `destination` itself included
  uint64_t symlinks = 0;
  uint64_t bytes = 0;  // the cloned files' apparent size: what a byte copy would have written
  // Relative paths (in the clone) of sockets and devices not recreated.
  std::vector<std::string> skipped;
};

// Clones `checkout` copy-on-write into `destination` (absolute; must not exist; its parent must).
absl::StatusOr<CloneStats> CloneCheckout(const GitCheckout& checkout,
                                         const std::string& destination);

}  // namespace ccsandbox::workspace

#endif  // CCSANDBOX_WORKSPACE_REFLINK_CLONE_H_
