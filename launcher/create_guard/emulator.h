// Decides one trapped creation call (see create_filter.h for which) and, when
// it is allowed and lands outside the free dirs, performs it on the tracee's
// behalf. The heart of create-time enforcement of the filename-pattern denies.
//
//   CreateEmulator emulator(*fs, patterns, mounts);
//   absl::StatusOr<CreateVerdict> verdict = emulator.Decide(call, notify);  //
//   then answer it
//
// For each call: read its path arguments from the tracee's memory ONCE (our
// copy is what we act on, so a thread rewriting the buffer afterwards changes
// nothing), open its cwd / dirfds as root, enter its mount namespace and root
// (once per sandbox), then, as the tracee (its uid, gid, groups and umask, no
// capability), and checking the call still waits (IdValid) before creating or
// reporting anything:
//   - open or mknod with S_ISUID or S_ISGID in its mode: EPERM, in free dirs
//     too (the seccomp baseline refuses these before us: a second line); a
//     mkdir's mode keeps only 01777, as in the kernel;
//   - resolve the directory that would receive each NEW name (every component
//   but the last
//     followed, magic links refused) and, for open without O_EXCL/O_NOFOLLOW,
//     follow a final symlink by hand: a dangling "ok" -> "evil.pem" creates
//     "evil.pem";
//   - every new name in a free dir: CONTINUE (Landlock lets the kernel create
//   it there);
//   - open of a name that already exists, or in /proc: CONTINUE (nothing new is
//   named; if a
//     race made it vanish, Landlock refuses the creation);
//   - anything we cannot resolve (a bad argument, a path through a magic link
//   such as
//     /dev/fd/1 -> /proc/self/fd/1): CONTINUE, so the tracee gets the kernel's
//     own answer;
//   - a new name matching a pattern, or a trusted-name rule (policy/trusted_names.h:
//   start-up files, git metadata, keys ...; for a symlink or a directory moved in, also
//   a rule that would match beneath it), outside runner state dirs: EACCES and a
//   violation (file-write-create, host path);
//   - else perform it ourselves relative to the resolved directory fd, with
//   O_EXCL /
//     O_NOFOLLOW so a swapped-in symlink makes us retry, never follow, and
//     answer with the result (an fd injected with ADDFD for open).
// Never CONTINUE for a decision Landlock does not also bound: Landlock lets the
// tracee create nothing outside the free dirs, so every CONTINUE is bounded,
// and we act only where we have established a new name outside them.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_EMULATOR_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_EMULATOR_H_

#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "launcher/create_guard/seccomp_notify.h"
#include "launcher/create_guard/tracee.h"
#include "launcher/create_guard/tracee_fs_context.h"
#include "base/unique_fd.h"
#include "policy/plan/create_guard_plan.h"
#include "policy/plan/filename_patterns.h"
#include "policy/plan/trusted_names.h"

namespace ccsandbox::launcher {

inline constexpr char kActionFileWriteCreate[] = "file-write-create";

struct CreateViolation {
  std::string action = kActionFileWriteCreate;
  std::string target;   // host path of the name that would have been created
  std::string pattern;  // the pattern it matched
  std::string syscall;  // e.g. "openat"
  pid_t pid = 0;        // host tid of the caller
};

struct CreateVerdict {
  enum class Kind {
    kDrop,      // the caller is gone: answer nothing
    kContinue,  // let the kernel run the call (Landlock bounds it)
    kErrno,     // fail with `error`
    kValue,     // return `value` (we performed it)
    kFd,  // install `fd` in the caller and return its number (we performed it)
  };
  Kind kind = Kind::kErrno;
  int error = 0;
  int64_t value = 0;
  UniqueFd fd;
  bool close_on_exec = false;
  std::optional<CreateViolation> violation;
};

class CreateEmulator {
 public:
  CreateEmulator(TraceeFsContext& fs, policy::FilenamePatterns patterns,
                 policy::TrustedNameRules trusted,
                 std::vector<policy::GuardMount> mounts,
                 std::vector<std::string> protected_paths = {})
      : fs_(fs),
        patterns_(std::move(patterns)),
        trusted_(std::move(trusted)),
        protected_paths_(std::move(protected_paths)),
        mounts_(std::move(mounts)),
        identities_(fs.host_proc()) {}

  // Non-OK only for the supervisor's own failures (it must stop); every outcome
  // for the caller, errors included, is a verdict.
  absl::StatusOr<CreateVerdict> Decide(const seccomp_notif& call,
                                       SeccompNotify& notify);

 private:
  TraceeFsContext& fs_;
  policy::FilenamePatterns patterns_;
  policy::TrustedNameRules trusted_;
  std::vector<std::string> protected_paths_;  // guest == host paths on the native backend
  std::vector<policy::GuardMount> mounts_;
  TraceeIdentityReader identities_;
  bool entered_confirmed_ = false;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_EMULATOR_H_
