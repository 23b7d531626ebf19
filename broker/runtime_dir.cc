#include "broker/runtime_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "spdlog/spdlog.h"
#include "workspace/remove_tree.h"

namespace ccsandbox::broker {
namespace {

// A socket path must fit sockaddr_un (108 bytes) with room for "/socks.sock".
constexpr size_t kMaxRootLength = 80;
constexpr char kLockName[] = ".lock";

}  // namespace

std::string RuntimeDir::DefaultRoot() {
  const char* xdg = getenv("XDG_RUNTIME_DIR");
  if (xdg != nullptr && xdg[0] == '/') return absl::StrCat(xdg, "/ccsandbox-broker");
  return absl::StrCat("/tmp/ccsandbox-broker-", getuid());
}

absl::StatusOr<std::unique_ptr<RuntimeDir>> RuntimeDir::Open(const std::string& root) {
  if (absl::Status s = CheckNormalizedAbsolute("--runtime-dir", root); !s.ok()) return s;
  if (root.size() > kMaxRootLength) {
    return absl::InvalidArgumentError(absl::StrCat("--runtime-dir: '", root, "' is longer than ",
                                                   kMaxRootLength,
                                                   " bytes; session socket paths must fit in 108"));
  }
  struct stat st;
  const bool exists = lstat(root.c_str(), &st) == 0;
  // Never follow or adopt something another user prepared for us.
  if (exists && (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--runtime-dir: '", root, "' exists and is not a directory owned by uid ", geteuid()));
  }
  if (!exists && mkdir(root.c_str(), 0700) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--runtime-dir: cannot create '", root, "': ", strerror(errno)));
  }
  chmod(root.c_str(), 0700);
  // Held while this broker runs: a second broker on the same directory is refused before it
  // touches anything, instead of wiping the live sessions' sockets.
  UniqueFd lock(
      open((root + "/" + kLockName).c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock.valid()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--runtime-dir: cannot open its lock: ", strerror(errno)));
  }
  if (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--runtime-dir: '", root,
                     "' is in use by another broker; give each broker its own "
                     "--runtime-dir"));
  }
  // A crashed broker's leftovers (the lock was free, so nobody uses them).
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    if (entry.path().filename() != kLockName) (void)workspace::RemoveTree(entry.path().string());
  }
  if (mkdir((root + "/s").c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(absl::StrCat("--runtime-dir: ", strerror(errno)));
  }
  auto dir = std::unique_ptr<RuntimeDir>(new RuntimeDir(root));
  dir->lock_ = std::move(lock);
  return dir;
}

RuntimeDir::~RuntimeDir() {
  // The lock goes last, with the directory: no other broker adopts it half removed.
  (void)workspace::RemoveTree(root_);
}

absl::StatusOr<std::string> RuntimeDir::CreateSessionDir() {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::string dir = absl::StrCat(root_, "/s/", next_++);
    if (mkdir(dir.c_str(), 0700) == 0) return dir;
    if (errno != EEXIST) {
      return absl::InternalError(absl::StrCat("cannot create '", dir, "': ", strerror(errno)));
    }
  }
  return absl::InternalError("cannot create a session directory");
}

void RuntimeDir::RemoveSessionDir(const std::string& dir) {
  if (!IsUnderOrEqual(dir, root_ + "/s") || dir == root_ + "/s") return;
  // Threat: a microVM's directory is writable from its session's sandbox (qemu's sockets), so
  // what is in it may be a symlink or be swapped during the removal: never follow anything.
  if (absl::Status removed = workspace::RemoveTree(dir); !removed.ok()) {
    spdlog::warn("cannot remove {}: {}", dir, std::string(removed.message()));
  }
}

}  // namespace ccsandbox::broker
