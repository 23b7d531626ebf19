#include "launcher/create_guard/emulator.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <initializer_list>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "launcher/create_guard/tracee.h"
#include "base/paths.h"

namespace ccsandbox::launcher {
namespace {

// How often one call is decided again when a racing thread keeps changing the
// tree under it (a name appears between our look and our create). Only an
// attack gets this far.
constexpr int kMaxAttempts = 16;
// The kernel's own limit on symlinks followed in one lookup.
constexpr int kMaxSymlinks = 40;

enum class Op { kOpen, kMkdir, kMknod, kSymlink, kLink, kRename };

struct PathArg {
  std::string path;
  UniqueFd base;  // the tracee's cwd or dirfd, for a relative path
};

struct Call {
  Op op = Op::kOpen;
  const char* syscall = "";
  PathArg first;   // open, mkdir, mknod: the path; symlink: the link; link,
                   // rename: old
  PathArg second;  // link, rename: new
  int flags = 0;   // open: O_*; linkat: AT_*; renameat2: RENAME_*
  mode_t mode = 0;
  unsigned dev = 0;            // mknod, as the kernel takes it
  std::string symlink_target;  // symlink: stored as given, never rewritten
  UniqueFd link_source;  // linkat of one of the tracee's fds (AT_EMPTY_PATH,
                         // /proc/self/fd/N)
};

// A directory that would receive a new name, held open, and the name.
struct Target {
  UniqueFd parent;
  std::string name;
  bool trailing_slash = false;
  bool in_procfs =
      false;  // a final symlink into /proc: a magic link, never followed by us
  int lstat_error = -1;  // of the name: 0 = it exists; -1 = not looked at yet
  std::string Name() const { return trailing_slash ? name + "/" : name; }
  // 0 when the name exists (as anything, a symlink included), else the errno.
  int Lstat() {
    if (lstat_error < 0) {
      struct stat st;
      lstat_error =
          fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0
              ? 0
              : errno;
    }
    return lstat_error;
  }
};

int AsFd(uint64_t arg) { return static_cast<int>(static_cast<uint32_t>(arg)); }

CreateVerdict Verdict(CreateVerdict::Kind kind, int error = 0) {
  CreateVerdict verdict;
  verdict.kind = kind;
  verdict.error = error;
  return verdict;
}
CreateVerdict Errno(int error) {
  return Verdict(CreateVerdict::Kind::kErrno, error);
}
CreateVerdict Continue() { return Verdict(CreateVerdict::Kind::kContinue); }
CreateVerdict Drop() { return Verdict(CreateVerdict::Kind::kDrop); }
CreateVerdict Result(int rc) {
  if (rc != 0) return Errno(errno);
  return Verdict(CreateVerdict::Kind::kValue);
}

// "/proc/self" names the caller: for the tracee that is its pid in its own pid
// namespace, where ours does not exist. Symlink targets the tracee stores are
// never rewritten.
std::string RewriteProcSelf(const std::string& path, const TraceeIdentity& id) {
  for (auto [prefix, replacement] :
       {std::pair<absl::string_view, std::string>{
            "/proc/self", absl::StrCat("/proc/", id.ns_tgid)},
        {"/proc/thread-self",
         absl::StrCat("/proc/", id.ns_tgid, "/task/", id.ns_tid)}}) {
    if (absl::StartsWith(path, prefix) &&
        (path.size() == prefix.size() || path[prefix.size()] == '/')) {
      return absl::StrCat(replacement, path.substr(prefix.size()));
    }
  }
  return path;
}

// "/proc/self/fd/N" and its spellings: the tracee naming its own fd N (the
// O_TMPFILE idiom).
std::optional<int> OwnFdPath(absl::string_view path, const TraceeIdentity& id) {
  for (const std::string& prefix :
       {std::string("/proc/self/fd/"), std::string("/proc/thread-self/fd/"),
        absl::StrCat("/proc/", id.ns_tgid, "/fd/")}) {
    int fd = -1;
    if (absl::StartsWith(path, prefix) &&
        absl::SimpleAtoi(path.substr(prefix.size()), &fd) && fd >= 0 &&
        path.substr(prefix.size()).find_first_not_of("0123456789") ==
            absl::string_view::npos) {
      return fd;
    }
  }
  return std::nullopt;
}

void Split(absl::string_view path, std::string* dir, std::string* name,
           bool* trailing) {
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

// Every component followed as the kernel would, except magic links
// (/proc/PID/cwd, fd/N): those would be followed with OUR rights, not the
// tracee's — outside its Landlock domain.
int OpenDir(int base, const std::string& dir, UniqueFd* out) {
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_MAGICLINKS;
  const long fd = syscall(SYS_openat2, base, dir.c_str(), &how, sizeof(how));
  if (fd < 0) return errno;
  out->Reset(static_cast<int>(fd));
  return 0;
}

int Resolve(const PathArg& arg, const TraceeIdentity& id, bool follow_final,
            Target* t) {
  if (arg.path.empty()) return ENOENT;
  const std::string path = RewriteProcSelf(arg.path, id);
  std::string dir;
  Split(path, &dir, &t->name, &t->trailing_slash);
  if (int r =
          OpenDir(path[0] == '/' ? AT_FDCWD : arg.base.get(), dir, &t->parent))
    return r;
  if (!follow_final) return 0;
  for (int hops = 0;; ++hops) {
    struct stat st;
    if (fstatat(t->parent.get(), t->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) !=
        0) {
      t->lstat_error = errno;
      return 0;
    }
    t->lstat_error = 0;
    if (!S_ISLNK(st.st_mode)) return 0;
    struct statfs fs;
    if (fstatfs(t->parent.get(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) {
      t->in_procfs = true;
      return 0;
    }
    if (hops == kMaxSymlinks) return ELOOP;
    char buf[PATH_MAX];
    const ssize_t n =
        readlinkat(t->parent.get(), t->name.c_str(), buf, sizeof(buf));
    // Replaced since we looked (by a racing thread): look again.
    if (n < 0 && (errno == ENOENT || errno == EINVAL)) continue;
    if (n < 0) return errno;
    if (n == 0) return ENOENT;
    if (n == sizeof(buf)) return ENAMETOOLONG;
    const std::string target = RewriteProcSelf(std::string(buf, n), id);
    std::string target_dir;
    bool trailing = false;
    Split(target, &target_dir, &t->name, &trailing);
    UniqueFd next;
    if (int r = OpenDir(target[0] == '/' ? AT_FDCWD : t->parent.get(),
                        target_dir, &next)) {
      return r;
    }
    t->parent = std::move(next);
    t->trailing_slash = t->trailing_slash || trailing;
    t->lstat_error = -1;
  }
}

// Reads the call's arguments, as root, before IdValid. 0 or the tracee's errno.
int Gather(int host_proc, const seccomp_notif& n, const TraceeIdentity& id,
           Call* c) {
  const pid_t tid = static_cast<pid_t>(n.pid);
  const __u64* a = n.data.args;
  auto path = [&](int dirfd, uint64_t address, PathArg* out) {
    if (int r = ReadTraceeString(tid, address, &out->path)) return r;
    if (out->path.empty() || out->path[0] == '/') return 0;
    return OpenTraceeFd(host_proc, tid, dirfd, &out->base);
  };
  switch (n.data.nr) {
    case SYS_open:
    case SYS_openat:
    case SYS_creat: {
      c->op = Op::kOpen;
      const bool at = n.data.nr == SYS_openat;
      c->syscall = at ? "openat" : n.data.nr == SYS_open ? "open" : "creat";
      c->flags = n.data.nr == SYS_creat ? O_CREAT | O_WRONLY | O_TRUNC
                                        : static_cast<int>(a[at ? 2 : 1]);
      c->mode = static_cast<mode_t>(a[n.data.nr == SYS_creat ? 1 : at ? 3 : 2]);
      return path(at ? AsFd(a[0]) : AT_FDCWD, a[at ? 1 : 0], &c->first);
    }
    case SYS_mkdir:
    case SYS_mkdirat:
    case SYS_mknod:
    case SYS_mknodat: {
      const bool at = n.data.nr == SYS_mkdirat || n.data.nr == SYS_mknodat;
      const bool dir = n.data.nr == SYS_mkdir || n.data.nr == SYS_mkdirat;
      c->op = dir ? Op::kMkdir : Op::kMknod;
      c->syscall =
          dir ? (at ? "mkdirat" : "mkdir") : (at ? "mknodat" : "mknod");
      c->mode = static_cast<mode_t>(a[at ? 2 : 1]);
      c->dev = static_cast<unsigned>(a[at ? 3 : 2]);
      return path(at ? AsFd(a[0]) : AT_FDCWD, a[at ? 1 : 0], &c->first);
    }
    case SYS_symlink:
    case SYS_symlinkat: {
      const bool at = n.data.nr == SYS_symlinkat;
      c->op = Op::kSymlink;
      c->syscall = at ? "symlinkat" : "symlink";
      if (int r = ReadTraceeString(tid, a[0], &c->symlink_target)) return r;
      return path(at ? AsFd(a[1]) : AT_FDCWD, a[at ? 2 : 1], &c->first);
    }
    case SYS_link:
    case SYS_linkat:
    case SYS_rename:
    case SYS_renameat:
    case SYS_renameat2: {
      const bool link = n.data.nr == SYS_link || n.data.nr == SYS_linkat;
      const bool at = n.data.nr != SYS_link && n.data.nr != SYS_rename;
      c->op = link ? Op::kLink : Op::kRename;
      c->syscall = link ? (at ? "linkat" : "link")
                        : (n.data.nr == SYS_rename     ? "rename"
                           : n.data.nr == SYS_renameat ? "renameat"
                                                       : "renameat2");
      c->flags = (n.data.nr == SYS_linkat || n.data.nr == SYS_renameat2)
                     ? static_cast<int>(a[4])
                     : 0;
      const int old_dirfd = at ? AsFd(a[0]) : AT_FDCWD;
      if (int r = path(old_dirfd, a[at ? 1 : 0], &c->first)) return r;
      if (int r = path(at ? AsFd(a[2]) : AT_FDCWD, a[at ? 3 : 1], &c->second))
        return r;
      if (link) {
        if ((c->flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) != 0)
          return EINVAL;
        if ((c->flags & AT_EMPTY_PATH) && c->first.path.empty()) {
          return OpenTraceeFd(host_proc, tid, old_dirfd, &c->link_source);
        }
        if (c->flags & AT_SYMLINK_FOLLOW) {
          if (std::optional<int> fd = OwnFdPath(c->first.path, id)) {
            const int r = OpenTraceeFd(host_proc, tid, *fd, &c->link_source);
            return r == EBADF ? ENOENT : r;
          }
        }
      }
      return 0;
    }
    default:
      return ENOSYS;
  }
}

struct Rules {
  TraceeFsContext& fs;
  const policy::FilenamePatterns& patterns;
  const policy::TrustedNameRules& trusted;
  const std::vector<std::string>& protected_paths;
  const std::vector<policy::GuardMount>& mounts;
  SeccompNotify& notify;
  uint64_t id;
  // Everything we read named the tracee by its tid, which a killed tracee's
  // successor could reuse: before we act on what we read (create, or report),
  // the call must still wait. Answering a call that stopped waiting fails
  // harmlessly, so CONTINUE and errors skip this.
  bool StillWaiting() const { return notify.IdValid(id); }
};

// The path of `t`'s name as the tracee sees it: its directory's path relative to the root we
// share with it, plus the name. Empty when the directory cannot be named.
std::string GuestPath(const Rules& rules, const Target& t) {
  char buf[PATH_MAX];
  const std::string link = absl::StrCat("thread-self/fd/", t.parent.get());
  const ssize_t n =
      readlinkat(rules.fs.host_proc(), link.c_str(), buf, sizeof(buf));
  if (n <= 0 || n == sizeof(buf) || buf[0] != '/') return "";
  std::string dir(buf, n);
  return dir == "/" ? absl::StrCat("/", t.name) : absl::StrCat(dir, "/", t.name);
}

// The host path of `t`'s name, for the violation, mapped through the run's mounts.
std::string HostPath(const Rules& rules, const Target& t) {
  const std::string guest = GuestPath(rules, t);
  return guest.empty() ? t.name : policy::HostPathFor(guest, rules.mounts);
}

// The trusted-name rule a new name at `t` would break: what the host runs or trusts
// automatically (start-up files, git metadata, keys ...). `beneath`: the new name is a
// directory moved there or a symlink, so what it holds or points to counts too. Runner state
// dirs are exempt (the operator declared them writable); a directory we cannot name is
// refused (fail closed).
std::optional<std::string> TrustedRule(const Rules& rules, const Target& t,
                                       bool beneath) {
  const std::string guest = GuestPath(rules, t);
  if (guest.empty()) return "(a directory the supervisor cannot name)";
  // Protected paths hold in runner state dirs too; a directory or symlink made above one
  // would bring it into being.
  for (const std::string& path : rules.protected_paths) {
    if (IsUnderOrEqual(guest, path) || (beneath && IsUnderOrEqual(path, guest))) {
      return path;
    }
  }
  const policy::GuardMount* closest = nullptr;
  for (const policy::GuardMount& m : rules.mounts) {
    if (IsUnderOrEqual(guest, m.guest) &&
        (closest == nullptr || m.guest.size() >= closest->guest.size())) {
      closest = &m;
    }
  }
  if (closest != nullptr && closest->trusted_exempt) return std::nullopt;
  if (std::optional<std::string> rule = rules.trusted.Match(guest)) return rule;
  if (beneath) return rules.trusted.MatchBeneath(guest);
  return std::nullopt;
}

CreateVerdict Deny(const Rules& rules, const Target& t,
                   const std::string& pattern) {
  if (!rules.StillWaiting()) return Drop();
  CreateVerdict verdict = Errno(EACCES);
  CreateViolation violation;
  violation.target = HostPath(rules, t);
  violation.pattern = pattern;
  verdict.violation = std::move(violation);
  return verdict;
}

// A name outside the free dirs that matches: refused, unless it exists already
// (then the call fails with EEXIST as it would, and nothing is created).
std::optional<CreateVerdict> Refusal(const Rules& rules, Target& t,
                                     bool beneath = false) {
  std::optional<std::string> hit = rules.patterns.Match(t.name);
  if (!hit.has_value()) hit = TrustedRule(rules, t, beneath);
  if (!hit.has_value()) return std::nullopt;
  if (t.Lstat() == 0) return Errno(EEXIST);
  return Deny(rules, t, *hit);
}

// S_ISUID / S_ISGID in a mode we would apply. We create as the tracee, so a
// set-id file we made would be one it made: refused as the seccomp baseline
// refuses it (the baseline decides first, so this is a second line).
bool SetsIdBits(mode_t mode) { return (mode & (S_ISUID | S_ISGID)) != 0; }

CreateVerdict DoOpen(const Rules& rules, const Call& c,
                     const TraceeIdentity& id) {
  // O_PATH drops O_CREAT: the kernel creates nothing.
  if (c.flags & O_PATH) return Continue();
  if (SetsIdBits(c.mode)) return Errno(EPERM);
  // O_CREAT follows a final symlink, and creates ITS target, unless O_EXCL or
  // O_NOFOLLOW.
  const bool follow = (c.flags & (O_EXCL | O_NOFOLLOW)) == 0;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    Target t;
    // Unresolvable by us (an error, or a path through a magic link): the kernel
    // answers.
    if (Resolve(c.first, id, follow, &t) != 0) return Continue();
    if (t.in_procfs || rules.fs.IsFree(t.parent.get())) return Continue();
    // It exists: the kernel opens it and names nothing new. Should a race
    // remove it first, the kernel's creation outside the free dirs is refused
    // by Landlock.
    if (t.Lstat() != ENOENT) return Continue();
    if (t.trailing_slash)
      return Continue();  // the kernel says EISDIR, creating nothing
    if (std::optional<std::string> hit = rules.patterns.Match(t.name)) {
      return Deny(rules, t, *hit);
    }
    if (std::optional<std::string> rule = TrustedRule(rules, t, false)) {
      return Deny(rules, t, *rule);
    }
    if (!rules.StillWaiting()) return Drop();
    // O_EXCL: we create it or fail; a symlink swapped in since our look is
    // never followed.
    UniqueFd fd(openat(t.parent.get(), t.name.c_str(),
                       c.flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       c.mode & 07777));
    if (fd.valid()) {
      CreateVerdict verdict = Verdict(CreateVerdict::Kind::kFd);
      verdict.fd = std::move(fd);
      verdict.close_on_exec = (c.flags & O_CLOEXEC) != 0;
      return verdict;
    }
    if (errno != EEXIST || (c.flags & O_EXCL)) return Errno(errno);
  }
  return Errno(ELOOP);
}

// mkdir, mknod, symlink: one new name, no symlink followed.
CreateVerdict DoMake(const Rules& rules, const Call& c,
                     const TraceeIdentity& id) {
  if (c.op == Op::kMknod && SetsIdBits(c.mode)) return Errno(EPERM);
  Target t;
  if (Resolve(c.first, id, false, &t) != 0 || rules.fs.IsFree(t.parent.get()))
    return Continue();
  // A new symlink can give a trusted name to anything it points to.
  if (std::optional<CreateVerdict> refused =
          Refusal(rules, t, /*beneath=*/c.op == Op::kSymlink))
    return std::move(*refused);
  if (!rules.StillWaiting()) return Drop();
  const std::string name = t.Name();
  switch (c.op) {
    case Op::kMkdir:
      // What the kernel keeps of mkdir's mode: never a set-id bit.
      return Result(mkdirat(t.parent.get(), name.c_str(), c.mode & 01777));
    case Op::kMknod:
      // The raw call: the device number exactly as the tracee passed it.
      return Result(static_cast<int>(
          syscall(SYS_mknodat, t.parent.get(), name.c_str(), c.mode, c.dev)));
    case Op::kSymlink:
      return Result(
          symlinkat(c.symlink_target.c_str(), t.parent.get(), name.c_str()));
    default:
      return Errno(ENOSYS);
  }
}

CreateVerdict DoLink(const Rules& rules, const Call& c,
                     const TraceeIdentity& id) {
  Target to;
  if (Resolve(c.second, id, false, &to) != 0 ||
      rules.fs.IsFree(to.parent.get())) {
    return Continue();
  }
  if (std::optional<CreateVerdict> refused = Refusal(rules, to))
    return std::move(*refused);
  UniqueFd opened;
  int source = c.link_source.get();
  if (source < 0) {
    if (c.first.path.empty()) return Continue();
    const std::string path = RewriteProcSelf(c.first.path, id);
    open_how how{};
    how.flags =
        O_PATH | O_CLOEXEC | ((c.flags & AT_SYMLINK_FOLLOW) ? 0 : O_NOFOLLOW);
    how.resolve = RESOLVE_NO_MAGICLINKS;
    const long fd =
        syscall(SYS_openat2, path[0] == '/' ? AT_FDCWD : c.first.base.get(),
                path.c_str(), &how, sizeof(how));
    if (fd < 0) return Continue();
    opened.Reset(static_cast<int>(fd));
    source = opened.get();
  }
  if (!rules.StillWaiting()) return Drop();
  // Link what the fd holds (a file, an O_TMPFILE, a symlink itself) through our
  // own /proc/thread-self/fd magic link: no CAP_DAC_READ_SEARCH needed, checks
  // as the tracee.
  const std::string via = absl::StrCat("thread-self/fd/", source);
  const std::string name = to.Name();
  return Result(linkat(rules.fs.host_proc(), via.c_str(), to.parent.get(),
                       name.c_str(), AT_SYMLINK_FOLLOW));
}

CreateVerdict DoRename(const Rules& rules, const Call& c,
                       const TraceeIdentity& id) {
  const unsigned flags = static_cast<unsigned>(c.flags);
  if ((flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) != 0 ||
      ((flags & RENAME_EXCHANGE) &&
       (flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)))) {
    return Continue();  // the kernel says EINVAL
  }
  Target from, to;
  if (Resolve(c.first, id, false, &from) != 0 ||
      Resolve(c.second, id, false, &to) != 0) {
    return Continue();
  }
  // New names: the destination; with RENAME_EXCHANGE the source's name too (it
  // now holds what was at the destination).
  // Each pair: the name that is (re)filled, and the object that lands there.
  std::vector<std::pair<const Target*, const Target*>> created = {{&to, &from}};
  if (flags & RENAME_EXCHANGE) created.push_back({&from, &to});
  bool all_free = true;
  for (const auto& [t, moved] : created) {
    if (rules.fs.IsFree(t->parent.get())) continue;
    all_free = false;
    // Replacing an existing matching name gives it new content: refused like a
    // creation.
    if (std::optional<std::string> hit = rules.patterns.Match(t->name)) {
      return Deny(rules, *t, *hit);
    }
    // A directory or symlink moved here brings what it holds under the new name.
    struct stat st {};
    const bool beneath =
        fstatat(moved->parent.get(), moved->name.c_str(), &st,
                AT_SYMLINK_NOFOLLOW) != 0 ||
        S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode);
    if (std::optional<std::string> rule = TrustedRule(rules, *t, beneath)) {
      return Deny(rules, *t, *rule);
    }
  }
  if (all_free) return Continue();
  if (!rules.StillWaiting()) return Drop();
  const std::string from_name = from.Name(), to_name = to.Name();
  return Result(static_cast<int>(syscall(SYS_renameat2, from.parent.get(),
                                         from_name.c_str(), to.parent.get(),
                                         to_name.c_str(), flags)));
}

CreateVerdict Perform(const Rules& rules, const Call& c,
                      const TraceeIdentity& id) {
  switch (c.op) {
    case Op::kOpen:
      return DoOpen(rules, c, id);
    case Op::kMkdir:
    case Op::kMknod:
    case Op::kSymlink:
      return DoMake(rules, c, id);
    case Op::kLink:
      return DoLink(rules, c, id);
    case Op::kRename:
      return DoRename(rules, c, id);
  }
  return Errno(ENOSYS);
}

}  // namespace

absl::StatusOr<CreateVerdict> CreateEmulator::Decide(const seccomp_notif& call,
                                                     SeccompNotify& notify) {
  const pid_t tid = static_cast<pid_t>(call.pid);
  // Only x86_64 calls reach us (the filter kills other ABIs); their numbers are
  // these.
  if (call.data.arch != AUDIT_ARCH_X86_64) return Errno(ENOSYS);

  TraceeIdentity id;
  if (int r = identities_.Read(tid, &id)) {
    if (r == ESRCH) return Drop();
    return absl::InternalError(
        absl::StrCat("create supervisor: cannot read /proc/", tid,
                     "/status: ", strerror(r)));
  }
  Call c;
  // A bad argument (EFAULT, EBADF, ENAMETOOLONG, EINVAL...): the kernel answers
  // exactly.
  if (int r = Gather(fs_.host_proc(), call, id, &c))
    return r == ESRCH ? Drop() : Continue();
  if (absl::Status entered = fs_.Enter(tid); !entered.ok()) {
    if (absl::IsNotFound(entered)) return Drop();
    return entered;
  }
  // The first Enter named the sandbox by a tid too: prove it before trusting
  // it.
  if (!entered_confirmed_) {
    if (!notify.IdValid(call.id))
      return absl::InternalError(
          "create supervisor: the first caller vanished while we entered its "
          "mount namespace; "
          "cannot be sure it was the sandbox's");
    entered_confirmed_ = true;
  }

  if (absl::Status became = fs_.BecomeTracee(id); !became.ok()) {
    fs_.BecomeSelf().IgnoreError();
    return became;
  }
  CreateVerdict verdict =
      Perform(Rules{fs_, patterns_, trusted_, protected_paths_, mounts_, notify, call.id}, c,
              id);
  if (absl::Status back = fs_.BecomeSelf(); !back.ok()) return back;
  if (verdict.violation.has_value()) {
    verdict.violation->syscall = c.syscall;
    verdict.violation->pid = tid;
  }
  return verdict;
}

}  // namespace ccsandbox::launcher
