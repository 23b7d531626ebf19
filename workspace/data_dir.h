// The broker's data directory (--data-dir), where conversations' worktrees live. Held by one
// broker at a time (flock on DIR/.lock), owned by the broker's uid and closed to everyone else.
// Every directory below it is opened from its fd, component by component, never through a
// symlink: sandboxes write inside repos/ and the agents' directories, and a symlink planted
// there must not steer the broker's own writes or removals elsewhere.
//
//   absl::StatusOr<std::unique_ptr<DataDir>> data = DataDir::Open("/var/lib/ccsandbox");
//   absl::StatusOr<UniqueFd> conv = (*data)->OpenDir({"workspaces", "w1"}, /*create=*/true);
#ifndef CCSANDBOX_WORKSPACE_DATA_DIR_H_
#define CCSANDBOX_WORKSPACE_DATA_DIR_H_

#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace ccsandbox::workspace {

class DataDir {
 public:
  // Creates `path` (absolute, normalised; 0700) when missing. FAILED_PRECONDITION when it is
  // a symlink or not a directory, not owned by this uid, writable by group or others (another
  // user could swap what the broker clones into), below a directory another user could rename
  // it in (one not root's or this uid's, or group/world-writable and not sticky), or held by
  // another broker.
  static absl::StatusOr<std::unique_ptr<DataDir>> Open(const std::string& path);

  // The resolved path: what binds and messages use.
  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }

  // Opens the directory at `components` below the data directory (each one a single name),
  // creating missing ones (0755) when `create`. NOT_FOUND when missing and !create;
  // FAILED_PRECONDITION when a component is a symlink or not a directory.
  absl::StatusOr<UniqueFd> OpenDir(const std::vector<std::string>& components, bool create) const;

  // `components` as an absolute path below path().
  std::string PathOf(const std::vector<std::string>& components) const;

  // The object at `path` (absolute, normalised, strictly below path()), reached from the data
  // directory's fd without following any symlink and without leaving it (openat2
  // RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH). INVALID_ARGUMENT when `path` is not below path();
  // FAILED_PRECONDITION when a component is a symlink now or the object is gone.
  absl::StatusOr<struct stat> StatBelow(const std::string& path) const;

 private:
  DataDir(std::string path, UniqueFd fd, UniqueFd lock)
      : path_(std::move(path)), fd_(std::move(fd)), lock_(std::move(lock)) {}
  const std::string path_;
  const UniqueFd fd_;
  const UniqueFd lock_;  // holds the flock while the broker lives
};

// Opens `name` in `dirfd` as a directory, never through a symlink; creates it (mode) when
// missing and `create`.
absl::StatusOr<UniqueFd> OpenSubdir(int dirfd, const std::string& name, bool create,
                                    mode_t mode = 0755);

}  // namespace ccsandbox::workspace

#endif  // CCSANDBOX_WORKSPACE_DATA_DIR_H_
