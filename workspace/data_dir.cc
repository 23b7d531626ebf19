#include "workspace/data_dir.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/paths.h"

namespace ccsandbox::workspace {
namespace {

absl::Status Precondition(const std::string& path, absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat("--data-dir ", path, ": ", why));
}

// Whoever may rename a directory above the data directory could swap the whole tree under the
// paths binds, clones and removals use: each must be root's or ours, and closed to others
// unless sticky (then only its owners may rename what is in it).
absl::Status CheckAncestors(const std::string& path, const std::string& parent) {
  std::string at = "/";
  std::vector<std::string> chain = {at};
  for (absl::string_view part : absl::StrSplit(parent, '/', absl::SkipEmpty())) {
    at = absl::StrCat(at == "/" ? "" : at, "/", part);
    chain.push_back(at);
  }
  for (const std::string& dir : chain) {
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) return Precondition(path, std::strerror(errno));
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
      return Precondition(path, absl::StrCat("'", dir, "' above it belongs to uid ", st.st_uid,
                                             ", who could swap the data directory; put it "
                                             "under directories of root's or this broker's"));
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
      return Precondition(path, absl::StrCat("'", dir,
                                             "' above it is writable by group or others (and "
                                             "not sticky): they could swap the data directory"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<UniqueFd> OpenSubdir(int dirfd, const std::string& name, bool create, mode_t mode) {
  if (create && ::mkdirat(dirfd, name.c_str(), mode) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("mkdir ", name, ": ", std::strerror(errno)));
  }
  UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.valid()) return fd;
  if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(name, ": does not exist"));
  if (errno == ELOOP || errno == ENOTDIR) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, ": is a symlink or not a directory; refusing to follow it"));
  }
  return absl::InternalError(absl::StrCat("open ", name, ": ", std::strerror(errno)));
}

absl::StatusOr<std::unique_ptr<DataDir>> DataDir::Open(const std::string& path) {
  if (absl::Status valid = CheckNormalizedAbsolute("--data-dir", path); !valid.ok()) return valid;
  if (path == "/") return Precondition(path, "the root directory is never a data directory");
  char parent[PATH_MAX];
  if (::realpath(ParentPath(path).c_str(), parent) == nullptr) {
    return Precondition(path, absl::StrCat("its parent: ", std::strerror(errno)));
  }
  if (absl::Status safe = CheckAncestors(path, parent); !safe.ok()) return safe;
  UniqueFd parent_fd(::open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd.valid()) {
    return Precondition(path, absl::StrCat("its parent: ", std::strerror(errno)));
  }
  const std::string name = path.substr(path.rfind('/') + 1);
  if (::mkdirat(parent_fd.get(), name.c_str(), 0700) != 0 && errno != EEXIST) {
    return Precondition(path, absl::StrCat("cannot create it: ", std::strerror(errno)));
  }
  // Never through a symlink: another user who planted one here would choose the directory.
  UniqueFd fd(
      ::openat(parent_fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    return Precondition(path, errno == ELOOP || errno == ENOTDIR
                                  ? "is a symlink or not a directory; give the directory itself"
                                  : std::strerror(errno));
  }
  const std::string resolved = absl::StrCat(parent == std::string("/") ? "" : parent, "/", name);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Precondition(path, std::strerror(errno));
  if (st.st_uid != ::geteuid()) {
    return Precondition(path, absl::StrCat("owned by uid ", st.st_uid, ", not by this broker (uid ",
                                           ::geteuid(), ")"));
  }
  // Another user able to write here could swap a directory the broker clones into.
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Precondition(path, "writable by group or others; chmod go-w it");
  }
  UniqueFd lock(::openat(fd.get(), ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock.valid()) {
    return Precondition(path, absl::StrCat("cannot open .lock: ", std::strerror(errno)));
  }
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    return Precondition(path, errno == EWOULDBLOCK
                                  ? "in use by another broker (its .lock is held)"
                                  : absl::StrCat("cannot lock it: ", std::strerror(errno)));
  }
  return std::unique_ptr<DataDir>(new DataDir(resolved, std::move(fd), std::move(lock)));
}

absl::StatusOr<UniqueFd> DataDir::OpenDir(const std::vector<std::string>& components,
                                          bool create) const {
  UniqueFd current(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
  if (!current.valid()) return absl::InternalError(std::strerror(errno));
  for (const std::string& name : components) {
    absl::StatusOr<UniqueFd> next = OpenSubdir(current.get(), name, create);
    if (!next.ok()) {
      return absl::Status(next.status().code(),
                          absl::StrCat(PathOf(components), ": ", next.status().message()));
    }
    current = *std::move(next);
  }
  return current;
}

absl::StatusOr<struct stat> DataDir::StatBelow(const std::string& path) const {
  if (absl::Status valid = CheckNormalizedAbsolute("path", path); !valid.ok()) return valid;
  if (path == path_ || !IsUnderOrEqual(path, path_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not below the data directory ", path_));
  }
  const std::string relative = path.substr(path_ == "/" ? 1 : path_.size() + 1);
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  UniqueFd fd(
      static_cast<int>(::syscall(SYS_openat2, fd_.get(), relative.c_str(), &how, sizeof(how))));
  if (!fd.valid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", path, "' ", errno == ELOOP ? "is reached through a symlink now" : "cannot be opened",
        " (", std::strerror(errno), ")"));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return absl::InternalError(std::strerror(errno));
  return st;
}

std::string DataDir::PathOf(const std::vector<std::string>& components) const {
  if (components.empty()) return path_;
  return absl::StrCat(path_ == "/" ? "" : path_, "/", absl::StrJoin(components, "/"));
}

}  // namespace ccsandbox::workspace
