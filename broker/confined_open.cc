#include "broker/confined_open.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::broker {
namespace {

constexpr int kRetries = 8;

absl::Status FromErrno(int err, absl::string_view relative) {
  const std::string what = absl::StrCat("'", relative, "'");
  switch (err) {
    case EXDEV:
      return absl::PermissionDeniedError(absl::StrCat(
          what, " leads outside its root (through '..', an absolute or escaping symlink)"));
    case ELOOP:
      return absl::PermissionDeniedError(
          absl::StrCat(what, " goes through a /proc magic link or too many symlinks"));
    case ENOENT:
      return absl::NotFoundError(absl::StrCat(what, " does not exist"));
    case EEXIST:
      return absl::AlreadyExistsError(absl::StrCat(what, " already exists"));
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(absl::StrCat(what, ": ", strerror(err)));
    case ENOTDIR:
    case EISDIR:
      return absl::FailedPreconditionError(absl::StrCat(what, ": ", strerror(err)));
    case ENOSYS:
      return absl::UnimplementedError(
          "openat2 is not available (Linux 5.6 or later is required); refusing to open files "
          "without kernel-enforced confinement");
    default:
      return absl::InternalError(absl::StrCat("openat2 ", what, ": ", strerror(err)));
  }
}

// openat2 with the confinement flags, retrying EINTR and EAGAIN (a concurrent rename while
// resolving `..`). Returns the fd or -errno.
int Openat2(int dirfd, const char* path, int flags, mode_t mode) {
  struct open_how how = {};
  how.flags = static_cast<__u64>(flags) | O_CLOEXEC;
  how.mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  for (int attempt = 0;; ++attempt) {
    long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
    if (fd >= 0) return static_cast<int>(fd);
    if ((errno == EINTR || errno == EAGAIN) && attempt < kRetries) continue;
    return -errno;
  }
}

absl::Status CheckRelative(absl::string_view relative) {
  if (relative.empty()) return absl::InvalidArgumentError("the relative path is empty");
  if (relative[0] == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("'", relative, "' is absolute; pass a path relative to the root"));
  }
  if (relative.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("the relative path contains a NUL byte");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<UniqueFd> OpenRoot(const std::string& path) {
  int fd = open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return err == ENOENT ? absl::NotFoundError(absl::StrCat("root '", path, "' does not exist"))
                         : absl::FailedPreconditionError(
                               absl::StrCat("cannot open root '", path, "': ", strerror(err)));
  }
  return UniqueFd(fd);
}

absl::StatusOr<UniqueFd> OpenConfined(int root_fd, absl::string_view relative, int flags,
                                      mode_t mode) {
  if (absl::Status s = CheckRelative(relative); !s.ok()) return s;
  const std::string path(relative);
  const int fd = Openat2(root_fd, path.c_str(), flags, mode);
  if (fd < 0) return FromErrno(-fd, relative);
  return UniqueFd(fd);
}

absl::Status MakeDirsConfined(int root_fd, absl::string_view relative_dir, mode_t mode) {
  if (absl::Status s = CheckRelative(relative_dir); !s.ok()) return s;
  const int first = Openat2(root_fd, ".", O_PATH | O_DIRECTORY, 0);
  if (first < 0) return FromErrno(-first, ".");
  UniqueFd dir(first);
  for (absl::string_view part : absl::StrSplit(relative_dir, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("'", relative_dir, "' contains '..'; pass the resolved relative path"));
    }
    const std::string name(part);
    int next = Openat2(dir.get(), name.c_str(), O_PATH | O_DIRECTORY, 0);
    if (next == -ENOENT) {
      // A single name: mkdirat does not follow a symlink planted at the last component.
      if (mkdirat(dir.get(), name.c_str(), mode) != 0 && errno != EEXIST) {
        return FromErrno(errno, relative_dir);
      }
      next = Openat2(dir.get(), name.c_str(), O_PATH | O_DIRECTORY, 0);
    }
    if (next < 0) return FromErrno(-next, relative_dir);
    dir.Reset(next);
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox::broker
