#include "workspace/reflink_clone.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "base/unique_fd.h"
#include "workspace/directory_listing.h"
#include "workspace/file_system_type.h"
#include "workspace/git_shared_paths.h"
#include "workspace/remove_tree.h"

namespace ccsandbox::workspace {
namespace {

constexpr int kMaxDepth = 256;
// A root broker's clone of a user's set-id file would be a set-id-root file.
constexpr mode_t kKeptModeBits = 07777 & ~(S_ISUID | S_ISGID);

// Which entries of a pass are cloned: `relative` is relative to the pass's source directory.
using Include = std::function<bool(const std::string& relative, const struct stat& st)>;

// One source directory cloned into one directory of the clone.
struct Pass {
  std::string source;  // the repository side, for messages
  std::string prefix;  // where the pass lands in the clone: "" or ".git/"
  Include include;
  // Overlay: a directory the clone already has is entered, not an error; its mode and times
  // stay those of the first pass.
  bool merge_directories = false;
};

std::string Join(const std::string& relative, const std::string& name) {
  return relative.empty() ? name : absl::StrCat(relative, "/", name);
}

absl::Status WithContext(const absl::Status& status, absl::string_view context) {
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

std::optional<std::string> RealPath(const std::string& path) {
  std::unique_ptr<char, decltype(&free)> real(realpath(path.c_str(), nullptr), &free);
  if (real == nullptr) return std::nullopt;
  return std::string(real.get());
}

// Whether the directory open as `fd` is at `path` (no component swapped for a symlink since the
// checkout was inspected: the clone would read another repository, another user's say).
bool OpenedAt(int fd, const std::string& path) {
  char buf[PATH_MAX + 1];
  const ssize_t n = readlink(absl::StrCat("/proc/self/fd/", fd).c_str(), buf, PATH_MAX);
  return n > 0 && std::string(buf, static_cast<size_t>(n)) == path;
}

absl::Status Swapped(const std::string& path) {
  return absl::AbortedError(absl::StrCat("'", path,
                                         "' leads elsewhere than when the checkout was inspected "
                                         "(a component swapped for a symlink?); nothing cloned"));
}

// The mode and times of `st`, on a directory or file open as `fd`.
int ApplyModeAndTimes(int fd, const struct stat& st) {
  const timespec times[2] = {st.st_atim, st.st_mtim};
  if (fchmod(fd, st.st_mode & kKeptModeBits) != 0) return errno;
  if (futimens(fd, times) != 0) return errno;
  return 0;
}

class Cloner {
 public:
  explicit Cloner(std::string destination) : destination_(std::move(destination)) {}

  // Clones the contents of `src` (at `relative` in the pass) into `dst`; `depth` is the level
  // of those entries in the clone (1: the clone's top).
  absl::Status CloneContents(const Pass& pass, int src, int dst, const std::string& relative,
                             int depth);
  absl::Status Fail(const Pass& pass, const std::string& relative, absl::string_view what,
                    int error) const;
  // Opens a source directory or file read-only, never following a symlink.
  UniqueFd OpenSource(int dir, const char* name, int flags);

  CloneStats& stats() { return stats_; }
  const std::string& destination() const { return destination_; }

 private:
  absl::Status CloneEntry(const Pass& pass, int src_dir, int dst_dir, const std::string& name,
                          const std::string& relative, int depth);
  absl::Status CloneDirectory(const Pass& pass, int src_dir, int dst_dir, const std::string& name,
                              const std::string& relative, int depth);
  absl::Status CloneFile(const Pass& pass, int src_dir, int dst_dir, const std::string& name,
                         const std::string& relative);
  absl::Status CloneSymlink(const Pass& pass, int src_dir, int dst_dir, const std::string& name,
                            const std::string& relative, const struct stat& st);
  absl::Status CloneFifo(const Pass& pass, int dst_dir, const std::string& name,
                         const std::string& relative, const struct stat& st);
  absl::Status ReflinkFailure(const Pass& pass, const std::string& relative, int error) const;

  std::string destination_;
  CloneStats stats_;
  bool noatime_ = true;  // dropped at the first EPERM: O_NOATIME needs the owner or CAP_FOWNER
};

absl::Status Cloner::Fail(const Pass& pass, const std::string& relative, absl::string_view what,
                          int error) const {
  return absl::ErrnoToStatus(
      error, absl::StrCat("cloning '", pass.prefix, relative, "' from '", pass.source, "' into '",
                          destination_, "': ", what));
}

absl::Status Cloner::ReflinkFailure(const Pass& pass, const std::string& relative,
                                    int error) const {
  const std::string path = absl::StrCat(pass.prefix, relative);
  if (error == EXDEV) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot clone '", path, "' copy-on-write: the data directory '", destination_,
        "' is on a different volume from the repository '", pass.source,
        "'; copy-on-write needs both on one file system (provisioning never falls back to a "
        "byte copy)"));
  }
  if (error == EOPNOTSUPP || error == EINVAL || error == ENOTTY || error == ENOSYS) {
    absl::StatusOr<std::string> type = FileSystemTypeOf(destination_);
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot clone '", path, "' copy-on-write: the file system of '", destination_, "' (",
        type.ok() ? *type : "type unknown",
        ") does not support reflink; put the data directory on a reflink-capable file system "
        "(xfs with reflink=1, btrfs) together with the repository (provisioning never falls back "
        "to a byte copy)"));
  }
  return Fail(pass, relative, "FICLONE", error);
}

UniqueFd Cloner::OpenSource(int dir, const char* name, int flags) {
  flags |= O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  if (noatime_) {
    UniqueFd fd(openat(dir, name, flags | O_NOATIME));
    if (fd.valid() || errno != EPERM) return fd;
    noatime_ = false;
  }
  return UniqueFd(openat(dir, name, flags));
}

absl::Status Cloner::CloneContents(const Pass& pass, int src, int dst, const std::string& relative,
                                   int depth) {
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(src);
  if (!names.ok()) {
    return WithContext(names.status(), absl::StrCat("cloning '", pass.prefix, relative, "' from '",
                                                    pass.source, "'"));
  }
  for (const std::string& name : *names) {
    if (absl::Status cloned = CloneEntry(pass, src, dst, name, Join(relative, name), depth);
        !cloned.ok()) {
      return cloned;
    }
  }
  return absl::OkStatus();
}

absl::Status Cloner::CloneEntry(const Pass& pass, int src_dir, int dst_dir, const std::string& name,
                                const std::string& relative, int depth) {
  struct stat st;
  if (fstatat(src_dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return Fail(pass, relative, "lstat", errno);
  }
  if (!pass.include(relative, st)) return absl::OkStatus();
  switch (st.st_mode & S_IFMT) {
    case S_IFDIR:
      return CloneDirectory(pass, src_dir, dst_dir, name, relative, depth);
    case S_IFREG:
      return CloneFile(pass, src_dir, dst_dir, name, relative);
    case S_IFLNK:
      return CloneSymlink(pass, src_dir, dst_dir, name, relative, st);
    case S_IFIFO:
      return CloneFifo(pass, dst_dir, name, relative, st);
    default:  // sockets, block and character devices
      stats_.skipped.push_back(absl::StrCat(pass.prefix, relative));
      return absl::OkStatus();
  }
}

absl::Status Cloner::CloneDirectory(const Pass& pass, int src_dir, int dst_dir,
                                    const std::string& name, const std::string& relative,
                                    int depth) {
  // The clone holds one open directory per level (of the source and of the clone).
  if (depth >= kMaxDepth) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot clone '", pass.prefix, relative, "' from '", pass.source,
                     "': the tree is deeper than ", kMaxDepth, " levels"));
  }
  UniqueFd src = OpenSource(src_dir, name.c_str(), O_DIRECTORY);
  if (!src.valid()) return Fail(pass, relative, "open", errno);
  struct stat st;
  if (fstat(src.get(), &st) != 0) return Fail(pass, relative, "fstat", errno);
  bool created = true;
  if (mkdirat(dst_dir, name.c_str(), 0700) != 0) {
    if (errno != EEXIST || !pass.merge_directories) return Fail(pass, relative, "mkdir", errno);
    created = false;
  }
  UniqueFd dst(openat(dst_dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dst.valid()) return Fail(pass, relative, "open the clone's directory", errno);
  struct stat existing;
  if (created) {
    ++stats_.directories;
    if (fchmod(dst.get(), 0700) != 0) return Fail(pass, relative, "chmod 0700", errno);
  } else if (fstat(dst.get(), &existing) != 0 ||
             fchmod(dst.get(), (existing.st_mode & 07777) | 0700) != 0) {
    return Fail(pass, relative, "make the clone's directory writable", errno);
  }
  if (absl::Status contents = CloneContents(pass, src.get(), dst.get(), relative, depth + 1);
      !contents.ok()) {
    return contents;
  }
  const int error = created ? ApplyModeAndTimes(dst.get(), st)
                            : (fchmod(dst.get(), existing.st_mode & 07777) == 0 ? 0 : errno);
  if (error != 0) return Fail(pass, relative, "set the mode and times", error);
  return absl::OkStatus();
}

absl::Status Cloner::CloneFile(const Pass& pass, int src_dir, int dst_dir, const std::string& name,
                               const std::string& relative) {
  UniqueFd src = OpenSource(src_dir, name.c_str(), 0);
  if (!src.valid()) return Fail(pass, relative, "open", errno);
  struct stat st;
  if (fstat(src.get(), &st) != 0) return Fail(pass, relative, "fstat", errno);
  if (!S_ISREG(st.st_mode)) {
    return absl::AbortedError(absl::StrCat("cloning '", pass.prefix, relative, "' from '",
                                           pass.source,
                                           "': it changed type while it was cloned; retry"));
  }
  UniqueFd dst(openat(dst_dir, name.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600));
  if (!dst.valid()) return Fail(pass, relative, "create", errno);
  if (ioctl(dst.get(), FICLONE, src.get()) != 0) return ReflinkFailure(pass, relative, errno);
  if (const int error = ApplyModeAndTimes(dst.get(), st); error != 0) {
    return Fail(pass, relative, "set the mode and times", error);
  }
  ++stats_.files;
  stats_.bytes += static_cast<uint64_t>(st.st_size);
  return absl::OkStatus();
}

absl::Status Cloner::CloneSymlink(const Pass& pass, int src_dir, int dst_dir,
                                  const std::string& name, const std::string& relative,
                                  const struct stat& st) {
  std::string target(PATH_MAX, '\0');
  const ssize_t length = readlinkat(src_dir, name.c_str(), target.data(), target.size());
  if (length < 0) return Fail(pass, relative, "readlink", errno);
  if (static_cast<size_t>(length) >= target.size()) {
    return Fail(pass, relative, "readlink", ENAMETOOLONG);
  }
  target.resize(static_cast<size_t>(length));
  if (symlinkat(target.c_str(), dst_dir, name.c_str()) != 0) {
    return Fail(pass, relative, "symlink", errno);
  }
  const timespec times[2] = {st.st_atim, st.st_mtim};
  if (utimensat(dst_dir, name.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
    return Fail(pass, relative, "set the symlink's times", errno);
  }
  ++stats_.symlinks;
  return absl::OkStatus();
}

absl::Status Cloner::CloneFifo(const Pass& pass, int dst_dir, const std::string& name,
                               const std::string& relative, const struct stat& st) {
  if (mkfifoat(dst_dir, name.c_str(), 0600) != 0) return Fail(pass, relative, "mkfifo", errno);
  // No one else can reach into the clone's directory (0700 until it is complete), so the name
  // is still the FIFO just made when its mode is set by name.
  if (fchmodat(dst_dir, name.c_str(), st.st_mode & kKeptModeBits, 0) != 0) {
    return Fail(pass, relative, "chmod", errno);
  }
  const timespec times[2] = {st.st_atim, st.st_mtim};
  if (utimensat(dst_dir, name.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
    return Fail(pass, relative, "set the times", errno);
  }
  return absl::OkStatus();
}

// The standalone .git of a linked worktree's clone, in `dot_git` (open, empty).
absl::Status CloneLinkedGitDir(Cloner& cloner, const GitCheckout& checkout, int dot_git) {
  UniqueFd common = cloner.OpenSource(AT_FDCWD, checkout.common_dir.c_str(), O_DIRECTORY);
  if (!common.valid()) {
    return absl::ErrnoToStatus(errno, absl::StrCat("opening '", checkout.common_dir, "'"));
  }
  if (!OpenedAt(common.get(), checkout.common_dir)) return Swapped(checkout.common_dir);
  const bool separate = checkout.common_dir != checkout.git_dir;
  Pass shared{checkout.common_dir, ".git/",
              [separate](const std::string& relative, const struct stat&) {
                // worktrees/: other checkouts' metadata, pointing at host paths.
                if (relative == "worktrees") return false;
                return !separate || IsSharedGitPath(relative);
              }};
  if (absl::Status cloned = cloner.CloneContents(shared, common.get(), dot_git, "", 2);
      !cloned.ok() || !separate) {
    return cloned;
  }
  UniqueFd own = cloner.OpenSource(AT_FDCWD, checkout.git_dir.c_str(), O_DIRECTORY);
  if (!own.valid()) {
    return absl::ErrnoToStatus(errno, absl::StrCat("opening '", checkout.git_dir, "'"));
  }
  if (!OpenedAt(own.get(), checkout.git_dir)) return Swapped(checkout.git_dir);
  Pass private_files{checkout.git_dir, ".git/",
                     [](const std::string& relative, const struct stat& st) {
                       // commondir and gitdir tie the worktree to the registered repository.
                       if (relative == "commondir" || relative == "gitdir") return false;
                       return S_ISDIR(st.st_mode) || !IsSharedGitPath(relative);
                     },
                     /*merge_directories=*/true};
  return cloner.CloneContents(private_files, own.get(), dot_git, "", 2);
}

}  // namespace

absl::StatusOr<CloneStats> CloneCheckout(const GitCheckout& checkout,
                                         const std::string& destination) {
  if (absl::Status normal = CheckNormalizedAbsolute("destination", destination); !normal.ok()) {
    return normal;
  }
  if (destination == "/") return absl::InvalidArgumentError("destination: '/' already exists");
  const std::string parent_path = ParentPath(destination);
  const std::string name = destination.substr(destination.rfind('/') + 1);
  const std::optional<std::string> parent = RealPath(parent_path);
  if (!parent.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat("destination: the parent of '", destination,
                                                      "' cannot be resolved: ", strerror(errno)));
  }
  const std::string target = absl::StrCat(*parent == "/" ? "" : *parent, "/", name);
  for (const std::string* repository : {&checkout.root, &checkout.git_dir, &checkout.common_dir}) {
    // A clone inside what it clones would write into the registered checkout (and into itself).
    if (IsUnderOrEqual(target, *repository)) {
      return absl::InvalidArgumentError(absl::StrCat("destination: '", destination,
                                                     "' lies inside the repository '", *repository,
                                                     "'; it must be outside"));
    }
  }
  Cloner cloner(target);
  UniqueFd root = cloner.OpenSource(AT_FDCWD, checkout.root.c_str(), O_DIRECTORY);
  struct stat root_st;
  if (!root.valid() || fstat(root.get(), &root_st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("opening the checkout '", checkout.root, "'"));
  }
  if (!OpenedAt(root.get(), checkout.root)) return Swapped(checkout.root);
  UniqueFd parent_fd(open(parent->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd.valid()) {
    return absl::FailedPreconditionError(absl::StrCat("destination: cannot open the parent of '",
                                                      destination, "': ", strerror(errno)));
  }
  if (mkdirat(parent_fd.get(), name.c_str(), 0700) != 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(
          absl::StrCat("destination: '", destination, "' already exists; nothing was cloned"));
    }
    return absl::ErrnoToStatus(errno, absl::StrCat("destination: creating '", destination, "'"));
  }
  // Nothing half-provisioned is left behind.
  absl::Cleanup remove = [&target] { (void)RemoveTree(target); };
  UniqueFd top(
      openat(parent_fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!top.valid() || fchmod(top.get(), 0700) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("destination: opening '", destination, "'"));
  }
  ++cloner.stats().directories;

  const bool linked = checkout.kind == GitCheckout::Kind::kLinkedWorktree;
  Pass tree{checkout.root, "", [linked](const std::string& relative, const struct stat&) {
              // A linked worktree's .git file points into the registered repository: its clone
              // gets a standalone .git directory instead.
              if (linked) return relative != ".git";
              // .git/worktrees/: other checkouts' metadata, pointing at host paths.
              return relative != ".git/worktrees";
            }};
  if (absl::Status cloned = cloner.CloneContents(tree, root.get(), top.get(), "", 1);
      !cloned.ok()) {
    return cloned;
  }
  if (linked) {
    if (mkdirat(top.get(), ".git", 0700) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("creating '", target, "/.git'"));
    }
    UniqueFd dot_git(openat(top.get(), ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dot_git.valid() || fchmod(dot_git.get(), 0700) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("opening '", target, "/.git'"));
    }
    ++cloner.stats().directories;
    if (absl::Status built = CloneLinkedGitDir(cloner, checkout, dot_git.get()); !built.ok()) {
      return built;
    }
    struct stat common_st;
    if (stat(checkout.common_dir.c_str(), &common_st) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("stat '", checkout.common_dir, "'"));
    }
    if (const int error = ApplyModeAndTimes(dot_git.get(), common_st); error != 0) {
      return absl::ErrnoToStatus(error, absl::StrCat("setting the mode of '", target, "/.git'"));
    }
  }
  if (const int error = ApplyModeAndTimes(top.get(), root_st); error != 0) {
    return absl::ErrnoToStatus(error, absl::StrCat("setting the mode of '", target, "'"));
  }
  std::move(remove).Cancel();
  return std::move(cloner.stats());
}

}  // namespace ccsandbox::workspace
