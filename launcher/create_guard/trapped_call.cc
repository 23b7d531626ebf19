#include "launcher/create_guard/trapped_call.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <optional>

#include "absl/status/statusor.h"

namespace ccsandbox::launcher {
namespace {

int AsFd(uint64_t arg) { return static_cast<int>(static_cast<uint32_t>(arg)); }

// x86_64's fchmodat2 (Linux 6.6), by number: these kernel headers predate it.
constexpr int kFchmodat2 = 452;
// The kernel's __O_TMPFILE bit (O_TMPFILE without the O_DIRECTORY it adds).
constexpr uint64_t kTmpfileBit = O_TMPFILE & ~O_DIRECTORY;

// The low 16 bits of a mode argument (a umode_t) carry S_ISUID or S_ISGID.
bool SetIdBits(uint64_t mode) { return (mode & (S_ISUID | S_ISGID)) != 0; }
bool CreatesOrTmpfile(uint64_t flags) { return (flags & (O_CREAT | kTmpfileBit)) != 0; }

// Reads the path at `address`, and opens `dirfd` (or the cwd) when it is relative.
absl::Status ReadPath(TraceeAccess& tracee, pid_t tid, int dirfd, uint64_t address, PathArg* out) {
  absl::StatusOr<std::string> path = tracee.ReadString(tid, address);
  if (!path.ok()) return path.status();
  out->path = std::move(*path);
  if (out->path.empty() || out->path[0] == '/') return absl::OkStatus();
  absl::StatusOr<UniqueFd> base = tracee.OpenFd(tid, dirfd);
  if (!base.ok()) return base.status();
  out->base = std::move(*base);
  return absl::OkStatus();
}

absl::Status DecodeOpen(const seccomp_notif& n, TraceeAccess& tracee, TrappedCall* c) {
  const __u64* a = n.data.args;
  const bool at = n.data.nr == SYS_openat;
  const bool creat = n.data.nr == SYS_creat;
  c->route = CreateRoute::kOpen;
  c->syscall = at ? "openat" : creat ? "creat" : "open";
  c->flags = creat ? O_CREAT | O_WRONLY | O_TRUNC : static_cast<int>(a[at ? 2 : 1]);
  c->mode = static_cast<mode_t>(a[creat ? 1 : at ? 3 : 2]);
  return ReadPath(tracee, n.pid, at ? AsFd(a[0]) : AT_FDCWD, a[at ? 1 : 0], &c->first);
}

absl::Status DecodeMake(const seccomp_notif& n, TraceeAccess& tracee, TrappedCall* c) {
  const __u64* a = n.data.args;
  const bool at = n.data.nr == SYS_mkdirat || n.data.nr == SYS_mknodat;
  const bool dir = n.data.nr == SYS_mkdir || n.data.nr == SYS_mkdirat;
  c->route = dir ? CreateRoute::kMkdir : CreateRoute::kMknod;
  c->syscall = dir ? (at ? "mkdirat" : "mkdir") : (at ? "mknodat" : "mknod");
  c->mode = static_cast<mode_t>(a[at ? 2 : 1]);
  c->dev = static_cast<unsigned>(a[at ? 3 : 2]);
  return ReadPath(tracee, n.pid, at ? AsFd(a[0]) : AT_FDCWD, a[at ? 1 : 0], &c->first);
}

absl::Status DecodeSymlink(const seccomp_notif& n, TraceeAccess& tracee, TrappedCall* c) {
  const __u64* a = n.data.args;
  const bool at = n.data.nr == SYS_symlinkat;
  c->route = CreateRoute::kSymlink;
  c->syscall = at ? "symlinkat" : "symlink";
  absl::StatusOr<std::string> target = tracee.ReadString(n.pid, a[0]);
  if (!target.ok()) return target.status();
  c->symlink_target = std::move(*target);
  return ReadPath(tracee, n.pid, at ? AsFd(a[1]) : AT_FDCWD, a[at ? 2 : 1], &c->first);
}

// linkat of one of the tracee's own fds: AT_EMPTY_PATH, or /proc/self/fd/N followed.
absl::Status OpenLinkSource(const seccomp_notif& n, const TraceeIdentity& id, int old_dirfd,
                            TraceeAccess& tracee, TrappedCall* c) {
  if ((c->flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) != 0) {
    return absl::InvalidArgumentError("linkat: unknown flags");
  }
  std::optional<int> fd;
  if ((c->flags & AT_EMPTY_PATH) && c->first.path.empty()) {
    fd = old_dirfd;
  } else if (c->flags & AT_SYMLINK_FOLLOW) {
    fd = OwnFdPath(c->first.path, id);
  }
  if (!fd.has_value()) return absl::OkStatus();
  absl::StatusOr<UniqueFd> source = tracee.OpenFd(n.pid, *fd);
  if (!source.ok()) return source.status();
  c->link_source = std::move(*source);
  return absl::OkStatus();
}

// chmod(path, mode), fchmod(fd, mode), fchmodat(dirfd, path, mode), fchmodat2(dirfd, path,
// mode, flags): the object is named only for the violation.
absl::Status DecodeChmod(const seccomp_notif& n, TraceeAccess& tracee, TrappedCall* c) {
  const __u64* a = n.data.args;
  const int nr = static_cast<int>(n.data.nr);
  c->route = CreateRoute::kChmod;
  c->syscall = nr == SYS_chmod      ? "chmod"
               : nr == SYS_fchmod   ? "fchmod"
               : nr == SYS_fchmodat ? "fchmodat"
                                    : "fchmodat2";
  const bool at = nr == SYS_fchmodat || nr == kFchmodat2;
  c->mode = static_cast<mode_t>(a[nr == SYS_chmod || nr == SYS_fchmod ? 1 : 2]);
  c->flags = nr == kFchmodat2 ? static_cast<int>(a[3]) : 0;
  if (nr == SYS_fchmod) {
    absl::StatusOr<UniqueFd> object = tracee.OpenFd(n.pid, AsFd(a[0]));
    if (!object.ok()) return object.status();
    c->object = std::move(*object);
    return absl::OkStatus();
  }
  if (absl::Status s =
          ReadPath(tracee, n.pid, at ? AsFd(a[0]) : AT_FDCWD, a[at ? 1 : 0], &c->first);
      !s.ok()) {
    return s;
  }
  if (c->first.path.empty() && (c->flags & AT_EMPTY_PATH)) {
    absl::StatusOr<UniqueFd> object = tracee.OpenFd(n.pid, AsFd(a[0]));
    if (!object.ok()) return object.status();
    c->object = std::move(*object);
  }
  return absl::OkStatus();
}

absl::Status DecodeLinkOrRename(const seccomp_notif& n, const TraceeIdentity& id,
                                TraceeAccess& tracee, TrappedCall* c) {
  const __u64* a = n.data.args;
  const bool link = n.data.nr == SYS_link || n.data.nr == SYS_linkat;
  const bool at = n.data.nr != SYS_link && n.data.nr != SYS_rename;
  c->route = link ? CreateRoute::kLink : CreateRoute::kRename;
  c->syscall = link ? (at ? "linkat" : "link")
                    : (n.data.nr == SYS_rename     ? "rename"
                       : n.data.nr == SYS_renameat ? "renameat"
                                                   : "renameat2");
  c->flags = (n.data.nr == SYS_linkat || n.data.nr == SYS_renameat2) ? static_cast<int>(a[4]) : 0;
  const int old_dirfd = at ? AsFd(a[0]) : AT_FDCWD;
  if (absl::Status s = ReadPath(tracee, n.pid, old_dirfd, a[at ? 1 : 0], &c->first); !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ReadPath(tracee, n.pid, at ? AsFd(a[2]) : AT_FDCWD, a[at ? 3 : 1], &c->second);
      !s.ok()) {
    return s;
  }
  return link ? OpenLinkSource(n, id, old_dirfd, tracee, c) : absl::OkStatus();
}

}  // namespace

bool AsksForSetIdMode(const seccomp_data& data) {
  const __u64* a = data.args;
  switch (static_cast<int>(data.nr)) {
    case SYS_chmod:
    case SYS_fchmod:
      return SetIdBits(a[1]);
    case SYS_fchmodat:
    case kFchmodat2:
      return SetIdBits(a[2]);
    case SYS_open:
      return CreatesOrTmpfile(a[1]) && SetIdBits(a[2]);
    case SYS_openat:
      return CreatesOrTmpfile(a[2]) && SetIdBits(a[3]);
    case SYS_creat:
    case SYS_mknod:
      return SetIdBits(a[1]);
    case SYS_mknodat:
      return SetIdBits(a[2]);
    default:
      return false;
  }
}

absl::Status DecodeTrappedCall(const seccomp_notif& notif, const TraceeIdentity& id,
                               TraceeAccess& tracee, TrappedCall* call) {
  call->set_id = AsksForSetIdMode(notif.data);
  switch (notif.data.nr) {
    case SYS_open:
    case SYS_openat:
    case SYS_creat:
      return DecodeOpen(notif, tracee, call);
    case SYS_mkdir:
    case SYS_mkdirat:
    case SYS_mknod:
    case SYS_mknodat:
      return DecodeMake(notif, tracee, call);
    case SYS_symlink:
    case SYS_symlinkat:
      return DecodeSymlink(notif, tracee, call);
    case SYS_link:
    case SYS_linkat:
    case SYS_rename:
    case SYS_renameat:
    case SYS_renameat2:
      return DecodeLinkOrRename(notif, id, tracee, call);
    case SYS_chmod:
    case SYS_fchmod:
    case SYS_fchmodat:
    case kFchmodat2:
      return DecodeChmod(notif, tracee, call);
    default:
      return absl::UnimplementedError("not a creation call the filter traps");
  }
}

}  // namespace ccsandbox::launcher
