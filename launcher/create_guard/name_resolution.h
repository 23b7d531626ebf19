// Where a trapped call's path would put a new name, found the way the kernel would find it
// for the tracee: the directory that would receive the name, held open, and the name. Runs on
// the supervising thread once it has entered the tracee's root and taken its credentials
// (tracee_access.h), so each lookup is checked with the tracee's rights.
//
//   ResolvedName t;
//   if (int error = ResolveName({path, std::move(cwd_fd)}, identity, /*follow_final=*/true, &t))
//     ...;  // the kernel answers the tracee
//   t.parent, t.name, t.Holds(), GuestPathOf(self_proc, t)
//
// Every component but the last is followed as the kernel would, except magic links
// (/proc/PID/cwd, fd/N): those would be followed with OUR rights, outside the tracee's
// Landlock domain. A final symlink is followed by hand only when asked (open without O_EXCL
// or O_NOFOLLOW creates the symlink's TARGET: a dangling "ok" -> "evil.pem" creates
// "evil.pem"), and never into /proc. "/proc/self" in a path the tracee passed means the
// tracee's pid in its own pid namespace; symlink targets it stores are never rewritten.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_NAME_RESOLUTION_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_NAME_RESOLUTION_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "base/unique_fd.h"
#include "launcher/create_guard/decision.h"
#include "launcher/create_guard/tracee.h"

namespace ccsandbox::launcher {

// A path argument of a trapped call, as read from the tracee.
struct PathArg {
  std::string path;
  UniqueFd base;  // the tracee's cwd or dirfd, for a relative path
};

// A directory that would receive a new name, held open, and the name.
struct ResolvedName {
  UniqueFd parent;
  std::string name;
  bool trailing_slash = false;
  bool in_procfs = false;  // a final symlink into /proc: a magic link, never followed by us
  // The name with its trailing slash, as the operation takes it ("dir/" for mkdir).
  std::string Name() const { return trailing_slash ? name + "/" : name; }
  // What the name holds now (looked at once, then remembered).
  NameHolds Holds();

  int lstat_error = -1;  // of the name: 0 = it exists; -1 = not looked at yet
  unsigned lstat_mode = 0;
};

// 0, or the errno of the lookup (the kernel then answers the tracee exactly).
int ResolveName(const PathArg& arg, const TraceeIdentity& id, bool follow_final, ResolvedName* t);

// `t`'s name as the tracee sees it: its directory's path relative to the root we share with
// it (read through our own /proc/thread-self/fd, `self_proc` an O_PATH fd of our /proc), plus
// the name. Empty when the directory cannot be named.
std::string GuestPathOf(int self_proc, const ResolvedName& t);

// The path of the object `fd` holds, as the tracee sees it (read like GuestPathOf). Empty when
// it cannot be named.
std::string GuestPathOfFd(int self_proc, int fd);

// "/proc/self..." and "/proc/thread-self..." as the tracee means them: /proc/<its pid>...
std::string RewriteProcSelf(const std::string& path, const TraceeIdentity& id);

// "/proc/self/fd/N" and its spellings: the tracee naming its own fd N (the O_TMPFILE idiom).
std::optional<int> OwnFdPath(absl::string_view path, const TraceeIdentity& id);

// The object `arg` names, as an O_PATH fd (a final symlink followed only when asked; no
// magic link followed), or an invalid fd when it cannot be opened.
UniqueFd OpenObject(const PathArg& arg, const TraceeIdentity& id, bool follow_final);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_NAME_RESOLUTION_H_
