// Decides one trapped creation call (see filter.h for which) and, when it is allowed and
// lands outside the free dirs, performs it on the tracee's behalf. The heart of create-time
// enforcement of the filename-pattern denies. A call that asks for a set-id mode (a chmod, or a
// creation) is refused with EPERM and reported (file-write-setid), wherever its name is: it is
// known from the registers before anything is read, so even a call we cannot decode is never
// left to the kernel.
//
//   CreateEmulator emulator(tracee, *CreateRules::Create(patterns, trusted, {}, mounts));
//   absl::StatusOr<CreateVerdict> verdict = emulator.Decide(call, listener);  // then answer it
//
// For each call: read its path arguments from the tracee's memory ONCE (trapped_call.h), open
// its cwd / dirfds as root, enter its mount namespace and root (once per sandbox), then, as
// the tracee (its uid, gid, groups and umask, no capability):
//   - resolve the directory that would receive each new name (name_resolution.h), and look
//     at what is there (the facts);
//   - decide (decision.h, a pure function: the table of routes and outcomes is there);
//   - carry the decision out: CONTINUE; an errno; EACCES and a violation (file-write-create,
//     host path); or perform it ourselves relative to the resolved directory fd, with
//     O_EXCL / O_NOFOLLOW so a swapped-in symlink makes us retry, never follow, and answer
//     with the result (an fd injected with ADDFD for open).
// Before creating or reporting anything the call must still wait (IdValid): everything we
// read named the tracee by its tid, which a killed tracee's successor could reuse. A call
// that stopped waiting is dropped unanswered (answering it would fail harmlessly anyway).
// Never CONTINUE for a decision Landlock does not also bound: Landlock lets the tracee create
// nothing outside the free dirs, so every CONTINUE is bounded, and we act only where we have
// established a new name outside them.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_EMULATOR_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_EMULATOR_H_

#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "launcher/create_guard/decision.h"
#include "launcher/create_guard/seccomp_listener.h"
#include "launcher/create_guard/tracee_access.h"

namespace ccsandbox::launcher {

inline constexpr char kActionFileWriteCreate[] = "file-write-create";
inline constexpr char kActionFileWriteSetId[] = "file-write-setid";

struct CreateViolation {
  std::string action = kActionFileWriteCreate;  // or kActionFileWriteSetId
  // Host path of the name that would have been created (a set-id mode: of the object, or the
  // path as the tracee gave it when it cannot be named).
  std::string target;
  std::string pattern;  // the pattern, trusted-name rule or protected path it matched
  std::string syscall;  // e.g. "openat"
  pid_t pid = 0;        // host tid of the caller
};

struct CreateVerdict {
  enum class Kind {
    kDrop,      // the caller is gone: answer nothing
    kContinue,  // let the kernel run the call (Landlock bounds it)
    kErrno,     // fail with `error`
    kValue,     // return `value` (we performed it)
    kFd,        // install `fd` in the caller and return its number (we performed it)
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
  // `tracee` must outlive the emulator; both live on the supervising thread.
  CreateEmulator(TraceeAccess& tracee, CreateRules rules)
      : tracee_(tracee), rules_(std::move(rules)) {}

  // Non-OK only for the supervisor's own failures (it must stop); every outcome for the
  // caller, errors included, is a verdict.
  absl::StatusOr<CreateVerdict> Decide(const seccomp_notif& call, SeccompListener& listener);

 private:
  TraceeAccess& tracee_;
  CreateRules rules_;
  bool entered_confirmed_ = false;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_EMULATOR_H_
