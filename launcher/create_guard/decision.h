// The create guard's decision for one trapped creation, as a pure function: the route the
// call takes, what the supervisor found out about each name it would (re)fill, and the run's
// rules in; what to do, and why, out. No system call here: the emulator (emulator.h) gathers
// the facts, resolving paths as the tracee, then carries the decision out.
//
//   absl::StatusOr<CreateRules> rules = CreateRules::Create(patterns, trusted, {}, mounts);
//   CreateRequest request;
//   request.route = CreateRoute::kOpen;
//   request.open_flags = O_CREAT | O_WRONLY;
//   request.resolved = true;
//   request.name = {.name = ".env", .guest_path = "/work/.env"};
//   CreateDecision d = DecideCreate(request, *rules);
//   // d.action == kDeny, d.reason == kFilenamePattern, d.rule == ".env",
//   // d.target == the host path of /work/.env (the violation's target)
//
// The checks, in order; the first that applies decides:
//   open   S_ISUID/S_ISGID in the mode: deny with EPERM (as the seccomp baseline would,
//          wherever the name is). O_PATH: kernel. Unresolved, a final magic link in /proc,
//          a free dir, a name that exists (or cannot be looked at), a trailing slash:
//          kernel. A filename pattern, then a trusted-name rule: deny. Else perform.
//   mkdir, mknod, symlink
//          mknod with a set-id mode: deny with EPERM. Unresolved or a free dir: kernel. A
//          pattern or trusted-name rule (for a symlink also one that would match beneath
//          it): EEXIST when the name exists, else deny. Else perform.
//   link   Unresolved destination or a free dir: kernel. Pattern or rule: EEXIST / deny as
//          above. No object to link: kernel. Else perform.
//   rename Flags the kernel rejects: kernel. RENAME_WHITEOUT (a device node at the source's
//          name): EPERM. Unresolved: kernel. Each name refilled outside
//          the free dirs (the destination; with RENAME_EXCHANGE the source too): a pattern
//          (even when the name exists: new content under it), then a trusted-name rule
//          (counting what a directory or symlink moved there brings beneath it): deny.
//          Every refilled name in a free dir: kernel. Else perform.
//   chmod  A set-id mode: deny with EPERM (only such calls are trapped). Else kernel.
// A trusted-name rule also covers: a protected path at or beneath the name (for a tree moved
// in or a symlink: at or above it too), which holds in runner state dirs as well; the rules
// proper do not apply beneath a runner state dir (a mount with trusted_exempt); a directory
// the supervisor cannot name is denied (fail closed).
//
// "kernel" (CONTINUE) is safe only because Landlock lets the tracee create nothing outside the
// free dirs: every CONTINUE is bounded, and the supervisor performs only what it established
// as a new name outside them.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_DECISION_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_DECISION_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/plan/create_guard_plan.h"
#include "policy/plan/filename_patterns.h"
#include "policy/plan/trusted_names.h"

namespace ccsandbox::launcher {

// The run's rules, as the supervisor was started with them.
struct CreateRules {
  // INVALID_ARGUMENT for a bad pattern or trusted-name rule.
  static absl::StatusOr<CreateRules> Create(const std::vector<std::string>& deny_patterns,
                                            const std::vector<std::string>& trusted_names,
                                            std::vector<std::string> protected_paths,
                                            std::vector<policy::GuardMount> mounts);

  policy::FilenamePatterns patterns;
  policy::TrustedNameRules trusted;
  std::vector<std::string> protected_paths;  // absolute guest paths (== host on this backend)
  std::vector<policy::GuardMount> mounts;    // for the closest mount and violation targets
};

enum class CreateRoute {
  kOpen,     // open, openat, creat with O_CREAT (an O_TMPFILE is named later, by link)
  kMkdir,    // mkdir, mkdirat
  kMknod,    // mknod, mknodat: FIFO, socket, regular file or device node
  kSymlink,  // symlink, symlinkat: the link's own name (its target is never rewritten)
  kLink,     // link, linkat (an O_TMPFILE fd, /proc/self/fd/N included)
  kRename,   // rename, renameat, renameat2 (RENAME_EXCHANGE refills both names)
  kChmod,    // chmod, fchmod, fchmodat, fchmodat2: the name is the object whose mode it sets
};

// What a name holds now (lstat: no symlink followed).
enum class NameHolds { kNothing, kDirectory, kSymlink, kOtherFile, kUnknown };

// What the supervisor found out about one name, resolved as the tracee would resolve it.
struct NameFacts {
  std::string name;          // its last component (for open: after following a final symlink)
  std::string guest_path;    // absolute, as the tracee sees it; empty: cannot be named
  bool in_free_dir = false;  // on a free dir's file system: Landlock lets the kernel create it
  NameHolds holds = NameHolds::kNothing;
  bool trailing_slash = false;  // open: the path ended in '/' (the kernel says EISDIR)
  bool in_procfs = false;       // open: a final symlink in /proc, a magic link we never follow
};

struct CreateRequest {
  CreateRoute route = CreateRoute::kOpen;
  int open_flags = 0;         // open: O_*
  unsigned rename_flags = 0;  // rename: RENAME_*
  mode_t mode = 0;            // open, mknod: as the tracee passed it
  // Every path the route needs resolved (false: a bad argument, or a path through a magic
  // link such as /dev/fd/1: the kernel answers exactly).
  bool resolved = false;
  bool link_source_found = false;  // link: the object to link is open
  NameFacts name;                  // the new name; link, rename: the destination
  NameFacts source;                // rename: the old name
};

enum class CreateAction {
  kKernel,   // CONTINUE: the kernel runs the call as made (Landlock bounds it)
  kFail,     // the call fails with `error`; nothing is reported
  kDeny,     // `error` (EACCES; EPERM for a set-id mode), and a violation (`rule`, `target`)
  kPerform,  // the supervisor performs the call as the tracee
};

enum class CreateReason {
  kOpenPath,          // O_PATH drops O_CREAT: nothing is created
  kSetIdMode,         // deny, EPERM: S_ISUID or S_ISGID in open's, mknod's or chmod's mode
  kRenameFlags,       // flags the kernel rejects with EINVAL
  kWhiteout,          // EPERM: RENAME_WHITEOUT leaves a device node where the source was
  kUnresolved,        // a path the supervisor cannot resolve: the kernel answers
  kProcfs,            // open: a final magic link in /proc
  kFreeDir,           // every new name in a free dir
  kNameExists,        // open: the name exists (or cannot be looked at): nothing new
  kTrailingSlash,     // open: "name/": the kernel says EISDIR
  kExistsAndMatches,  // EEXIST: a name that would be refused exists already
  kFilenamePattern,   // deny: a filename pattern (writeDenyPatterns)
  kTrustedName,       // deny: a trusted-name rule (denyWriteNames)
  kProtectedPath,     // deny: a protected path
  kUnnamedDirectory,  // deny: the directory cannot be named (fail closed)
  kNoLinkSource,      // link: the object to link cannot be opened: the kernel answers
  kPlainMode,         // chmod without a set-id bit: the kernel answers
  kAllowed,           // perform
};

struct CreateDecision {
  CreateAction action = CreateAction::kKernel;
  CreateReason reason = CreateReason::kUnresolved;
  int error = 0;       // kFail, kDeny: the errno
  std::string rule;    // kDeny, kFail on kExistsAndMatches: the pattern, rule or protected path
  std::string target;  // kDeny: the host path of the refused name (the violation's target)
};

// What the tracee's call should come to. Pure.
CreateDecision DecideCreate(const CreateRequest& request, const CreateRules& rules);

// Names for tests and logs: "kernel", "fail", "deny", "perform"; "free-dir", "pattern" ...
const char* CreateActionName(CreateAction action);
const char* CreateReasonName(CreateReason reason);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_DECISION_H_
