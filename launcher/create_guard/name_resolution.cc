#include "launcher/create_guard/name_resolution.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox::launcher {
namespace {

// The kernel's own limit on symlinks followed in one lookup.
constexpr int kMaxSymlinks = 40;

void Split(absl::string_view path, std::string* dir, std::string* name, bool* trailing) {
  size_t end = path.size();
  while (end > 0 && path[end - 1] == '/') --end;
  *trailing = end < path.size();
  if (end == 0) {  // "/" or "///"
    *dir = "/";
    *name = ".";
    return;
  }
  const size_t slash = path.rfind('/', end - 1);
  if (slash == absl::string_view::npos) {
    *dir = ".";
    *name = std::string(path.substr(0, end));
  } else {
    *dir = slash == 0 ? "/" : std::string(path.substr(0, slash));
    *name = std::string(path.substr(slash + 1, end - slash - 1));
  }
}

// Every component followed as the kernel would, except magic links (/proc/PID/cwd, fd/N):
// those would be followed with OUR rights, not the tracee's — outside its Landlock domain.
int OpenDir(int base, const std::string& dir, UniqueFd* out) {
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_MAGICLINKS;
  const long fd = syscall(SYS_openat2, base, dir.c_str(), &how, sizeof(how));
  if (fd < 0) return errno;
  out->Reset(static_cast<int>(fd));
  return 0;
}

// Remembers what fstatat said about `t`'s name.
void Remember(ResolvedName* t, int rc, const struct stat& st) {
  t->lstat_error = rc == 0 ? 0 : errno;
  t->lstat_mode = rc == 0 ? st.st_mode : 0;
}

// Replaces `t` by the target of the symlink it names. 0, or the errno of the lookup; EAGAIN
// when the symlink was replaced since we looked (a racing thread): look again.
int FollowSymlink(const TraceeIdentity& id, ResolvedName* t) {
  char buf[PATH_MAX];
  const ssize_t n = readlinkat(t->parent.get(), t->name.c_str(), buf, sizeof(buf));
  if (n < 0 && (errno == ENOENT || errno == EINVAL)) return EAGAIN;
  if (n < 0) return errno;
  if (n == 0) return ENOENT;
  if (n == sizeof(buf)) return ENAMETOOLONG;
  const std::string target = RewriteProcSelf(std::string(buf, n), id);
  std::string target_dir;
  bool trailing = false;
  Split(target, &target_dir, &t->name, &trailing);
  UniqueFd next;
  if (int r = OpenDir(target[0] == '/' ? AT_FDCWD : t->parent.get(), target_dir, &next)) {
    return r;
  }
  t->parent = std::move(next);
  t->trailing_slash = t->trailing_slash || trailing;
  t->lstat_error = -1;
  return 0;
}

}  // namespace

NameHolds ResolvedName::Holds() {
  if (lstat_error < 0) {
    struct stat st {};
    Remember(this, fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW), st);
  }
  if (lstat_error == ENOENT) return NameHolds::kNothing;
  if (lstat_error != 0) return NameHolds::kUnknown;
  if (S_ISDIR(lstat_mode)) return NameHolds::kDirectory;
  if (S_ISLNK(lstat_mode)) return NameHolds::kSymlink;
  return NameHolds::kOtherFile;
}

std::string RewriteProcSelf(const std::string& path, const TraceeIdentity& id) {
  for (auto [prefix, replacement] :
       {std::pair<absl::string_view, std::string>{"/proc/self", absl::StrCat("/proc/", id.ns_tgid)},
        {"/proc/thread-self", absl::StrCat("/proc/", id.ns_tgid, "/task/", id.ns_tid)}}) {
    if (absl::StartsWith(path, prefix) &&
        (path.size() == prefix.size() || path[prefix.size()] == '/')) {
      return absl::StrCat(replacement, path.substr(prefix.size()));
    }
  }
  return path;
}

std::optional<int> OwnFdPath(absl::string_view path, const TraceeIdentity& id) {
  for (const std::string& prefix :
       {std::string("/proc/self/fd/"), std::string("/proc/thread-self/fd/"),
        absl::StrCat("/proc/", id.ns_tgid, "/fd/")}) {
    int fd = -1;
    if (absl::StartsWith(path, prefix) && absl::SimpleAtoi(path.substr(prefix.size()), &fd) &&
        fd >= 0 &&
        path.substr(prefix.size()).find_first_not_of("0123456789") == absl::string_view::npos) {
      return fd;
    }
  }
  return std::nullopt;
}

int ResolveName(const PathArg& arg, const TraceeIdentity& id, bool follow_final, ResolvedName* t) {
  if (arg.path.empty()) return ENOENT;
  const std::string path = RewriteProcSelf(arg.path, id);
  std::string dir;
  Split(path, &dir, &t->name, &t->trailing_slash);
  if (int r = OpenDir(path[0] == '/' ? AT_FDCWD : arg.base.get(), dir, &t->parent)) return r;
  if (!follow_final) return 0;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    const int rc = fstatat(t->parent.get(), t->name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
    Remember(t, rc, st);
    if (rc != 0 || !S_ISLNK(st.st_mode)) return 0;
    struct statfs fs;
    if (fstatfs(t->parent.get(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) {
      t->in_procfs = true;
      return 0;
    }
    if (hops == kMaxSymlinks) return ELOOP;
    const int r = FollowSymlink(id, t);
    if (r == EAGAIN) continue;
    if (r != 0) return r;
  }
}

std::string GuestPathOfFd(int self_proc, int fd) {
  char buf[PATH_MAX];
  const std::string link = absl::StrCat("thread-self/fd/", fd);
  const ssize_t n = readlinkat(self_proc, link.c_str(), buf, sizeof(buf));
  if (n <= 0 || n == sizeof(buf) || buf[0] != '/') return "";
  return std::string(buf, n);
}

std::string GuestPathOf(int self_proc, const ResolvedName& t) {
  const std::string dir = GuestPathOfFd(self_proc, t.parent.get());
  if (dir.empty()) return "";
  return dir == "/" ? absl::StrCat("/", t.name) : absl::StrCat(dir, "/", t.name);
}

UniqueFd OpenObject(const PathArg& arg, const TraceeIdentity& id, bool follow_final) {
  if (arg.path.empty()) return UniqueFd();
  const std::string path = RewriteProcSelf(arg.path, id);
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC | (follow_final ? 0 : O_NOFOLLOW);
  how.resolve = RESOLVE_NO_MAGICLINKS;
  const long fd = syscall(SYS_openat2, path[0] == '/' ? AT_FDCWD : arg.base.get(), path.c_str(),
                          &how, sizeof(how));
  return UniqueFd(fd < 0 ? -1 : static_cast<int>(fd));
}

}  // namespace ccsandbox::launcher
