// Test support: everything observable about a tree (type, mode, owner, size, times, contents,
// symlink targets) per relative path, read without following a symlink or touching an atime
// (O_NOATIME), so two manifests of one tree taken apart in time are equal unless the tree
// changed; and a readable difference of two manifests.
//
//   absl::StatusOr<Manifest> before = TakeManifest(repo);
//   ... clone, work in the clone ...
//   EXPECT_EQ(DescribeDifference(*before, *TakeManifest(repo)), "");
#ifndef CCSANDBOX_WORKSPACE_TREE_MANIFEST_H_
#define CCSANDBOX_WORKSPACE_TREE_MANIFEST_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace ccsandbox::workspace::testing {

struct ManifestEntry {
  mode_t mode = 0;  // type and permission bits
  uid_t uid = 0;
  gid_t gid = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t atime_ns = 0;  // not for symlinks: reading one (readlink) may update it
  uint64_t inode = 0;
  uint64_t content_hash = 0;  // regular files
  std::string link_target;    // symlinks
  bool operator==(const ManifestEntry& other) const = default;
};

// Relative path ("" is the root itself) -> entry.
using Manifest = std::map<std::string, ManifestEntry>;

// `skip(relative)` true leaves out an entry (and what is below it).
absl::StatusOr<Manifest> TakeManifest(
    const std::string& root, const std::function<bool(const std::string&)>& skip = nullptr);

// Without what no copy of a tree keeps: inode numbers and directory sizes (the file system's
// business). Compare copies through this.
Manifest Portable(Manifest manifest);

// What a clone of a tree should show: set-id bits stripped, everything owned by `uid`/`gid`.
Manifest AsCloned(Manifest manifest, uid_t uid, gid_t gid);

// "" when equal; otherwise one line per path that differs (at most 20).
std::string DescribeDifference(const Manifest& expected, const Manifest& actual);

}  // namespace ccsandbox::workspace::testing

#endif  // CCSANDBOX_WORKSPACE_TREE_MANIFEST_H_
