#include "launcher/create_guard/emulator.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "launcher/create_guard/name_resolution.h"
#include "launcher/create_guard/trapped_call.h"

namespace ccsandbox::launcher {
namespace {

// How often one call is decided again when a racing thread keeps changing the tree under it
// (a name appears between our look and our create). Only an attack gets this far.
constexpr int kMaxAttempts = 16;

CreateVerdict Verdict(CreateVerdict::Kind kind, int error = 0) {
  CreateVerdict verdict;
  verdict.kind = kind;
  verdict.error = error;
  return verdict;
}
CreateVerdict Errno(int error) { return Verdict(CreateVerdict::Kind::kErrno, error); }
CreateVerdict Continue() { return Verdict(CreateVerdict::Kind::kContinue); }
CreateVerdict Drop() { return Verdict(CreateVerdict::Kind::kDrop); }
CreateVerdict Result(int rc) {
  if (rc != 0) return Errno(errno);
  return Verdict(CreateVerdict::Kind::kValue);
}

// One call being decided: who it is for and how to check it still waits.
struct Context {
  TraceeAccess& tracee;
  const CreateRules& rules;
  SeccompListener& listener;
  uint64_t id;
  const TraceeIdentity& identity;
  // Everything we read named the tracee by its tid, which a killed tracee's successor could
  // reuse: before we act on what we read (create, or report), the call must still wait.
  // Answering a call that stopped waiting fails harmlessly, so CONTINUE and errors skip this.
  bool StillWaiting() const { return listener.IdValid(id).ok(); }
};

// What the decision needs to know of a resolved name. Its guest path only outside the free
// dirs and /proc: the decision never looks at it there.
NameFacts FactsOf(const Context& ctx, ResolvedName& t) {
  NameFacts facts;
  facts.name = t.name;
  facts.in_free_dir = ctx.tracee.IsFree(t.parent.get());
  facts.holds = t.Holds();
  facts.trailing_slash = t.trailing_slash;
  facts.in_procfs = t.in_procfs;
  if (!facts.in_free_dir && !facts.in_procfs) {
    facts.guest_path = GuestPathOf(ctx.tracee.self_proc(), t);
  }
  return facts;
}

// A decision that is not kPerform, as the verdict for the caller.
CreateVerdict CarryOut(const Context& ctx, CreateDecision decision) {
  switch (decision.action) {
    case CreateAction::kKernel:
      return Continue();
    case CreateAction::kFail:
      return Errno(decision.error);
    case CreateAction::kDeny: {
      if (!ctx.StillWaiting()) return Drop();
      CreateVerdict verdict = Errno(decision.error);
      CreateViolation violation;
      if (decision.reason == CreateReason::kSetIdMode) violation.action = kActionFileWriteSetId;
      violation.target = std::move(decision.target);
      violation.pattern = std::move(decision.rule);
      verdict.violation = std::move(violation);
      return verdict;
    }
    case CreateAction::kPerform:
      break;
  }
  return Errno(ENOSYS);  // not reached: the caller performs
}

CreateVerdict EmulateOpen(const Context& ctx, const TrappedCall& c) {
  // O_CREAT follows a final symlink, and creates ITS target, unless O_EXCL or O_NOFOLLOW.
  const bool follow = (c.flags & (O_EXCL | O_NOFOLLOW)) == 0;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    CreateRequest request;
    request.route = CreateRoute::kOpen;
    request.open_flags = c.flags;
    request.mode = c.mode;
    ResolvedName t;
    request.resolved = ResolveName(c.first, ctx.identity, follow, &t) == 0;
    if (request.resolved) request.name = FactsOf(ctx, t);
    CreateDecision decision = DecideCreate(request, ctx.rules);
    if (decision.action != CreateAction::kPerform) return CarryOut(ctx, std::move(decision));
    if (!ctx.StillWaiting()) return Drop();
    // O_EXCL: we create it or fail; a symlink swapped in since our look is never followed.
    UniqueFd fd(openat(t.parent.get(), t.name.c_str(),
                       c.flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, c.mode & 07777));
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
CreateVerdict EmulateMake(const Context& ctx, const TrappedCall& c) {
  CreateRequest request;
  request.route = c.route;
  request.mode = c.mode;
  ResolvedName t;
  request.resolved = ResolveName(c.first, ctx.identity, false, &t) == 0;
  if (request.resolved) request.name = FactsOf(ctx, t);
  CreateDecision decision = DecideCreate(request, ctx.rules);
  if (decision.action != CreateAction::kPerform) return CarryOut(ctx, std::move(decision));
  if (!ctx.StillWaiting()) return Drop();
  const std::string name = t.Name();
  switch (c.route) {
    case CreateRoute::kMkdir:
      // What the kernel keeps of mkdir's mode: never a set-id bit.
      return Result(mkdirat(t.parent.get(), name.c_str(), c.mode & 01777));
    case CreateRoute::kMknod:
      // The raw call: the device number exactly as the tracee passed it.
      return Result(
          static_cast<int>(syscall(SYS_mknodat, t.parent.get(), name.c_str(), c.mode, c.dev)));
    case CreateRoute::kSymlink:
      return Result(symlinkat(c.symlink_target.c_str(), t.parent.get(), name.c_str()));
    default:
      return Errno(ENOSYS);
  }
}

CreateVerdict EmulateLink(const Context& ctx, const TrappedCall& c) {
  CreateRequest request;
  request.route = CreateRoute::kLink;
  ResolvedName to;
  request.resolved = ResolveName(c.second, ctx.identity, false, &to) == 0;
  UniqueFd opened;
  int source = c.link_source.get();
  if (request.resolved) {
    request.name = FactsOf(ctx, to);
    if (source < 0) {
      opened = OpenObject(c.first, ctx.identity, (c.flags & AT_SYMLINK_FOLLOW) != 0);
      source = opened.get();
    }
  }
  request.link_source_found = source >= 0;
  CreateDecision decision = DecideCreate(request, ctx.rules);
  if (decision.action != CreateAction::kPerform) return CarryOut(ctx, std::move(decision));
  if (!ctx.StillWaiting()) return Drop();
  // Link what the fd holds (a file, an O_TMPFILE, a symlink itself) through our own
  // /proc/thread-self/fd magic link: no CAP_DAC_READ_SEARCH needed, checks as the tracee.
  const std::string via = absl::StrCat("thread-self/fd/", source);
  const std::string name = to.Name();
  return Result(linkat(ctx.tracee.self_proc(), via.c_str(), to.parent.get(), name.c_str(),
                       AT_SYMLINK_FOLLOW));
}

CreateVerdict EmulateRename(const Context& ctx, const TrappedCall& c) {
  CreateRequest request;
  request.route = CreateRoute::kRename;
  request.rename_flags = static_cast<unsigned>(c.flags);
  ResolvedName from, to;
  request.resolved = ResolveName(c.first, ctx.identity, false, &from) == 0 &&
                     ResolveName(c.second, ctx.identity, false, &to) == 0;
  if (request.resolved) {
    request.name = FactsOf(ctx, to);
    request.source = FactsOf(ctx, from);
  }
  CreateDecision decision = DecideCreate(request, ctx.rules);
  if (decision.action != CreateAction::kPerform) return CarryOut(ctx, std::move(decision));
  if (!ctx.StillWaiting()) return Drop();
  const std::string from_name = from.Name(), to_name = to.Name();
  return Result(static_cast<int>(syscall(SYS_renameat2, from.parent.get(), from_name.c_str(),
                                         to.parent.get(), to_name.c_str(), request.rename_flags)));
}

// Where the object (chmod) or new name (open, mknod) of a set-id call is, as the tracee sees
// it; empty when it cannot be named. Only for the violation: nothing is decided on it.
std::string SetIdTargetOf(const Context& ctx, const TrappedCall& c) {
  if (c.object.valid()) return GuestPathOfFd(ctx.tracee.self_proc(), c.object.get());
  if (c.route == CreateRoute::kChmod) {
    const UniqueFd object = OpenObject(c.first, ctx.identity, (c.flags & AT_SYMLINK_NOFOLLOW) == 0);
    if (object.valid()) return GuestPathOfFd(ctx.tracee.self_proc(), object.get());
  }
  ResolvedName t;
  if (ResolveName(c.first, ctx.identity, /*follow_final=*/false, &t) != 0) return "";
  return GuestPathOf(ctx.tracee.self_proc(), t);
}

// A call decided by its mode alone: a set-id mode is refused with EPERM and reported wherever
// the name is (as the seccomp baseline would refuse it); a chmod without one is the kernel's.
// `guest_path`: the target as the tracee sees it ("" when unknown: the path as given).
CreateVerdict DecideByMode(const Context& ctx, const TrappedCall& c,
                           const std::string& guest_path) {
  CreateRequest request;
  request.route = c.route;
  request.open_flags = c.flags;
  request.mode = c.mode;
  request.resolved = true;
  request.name.name = c.first.path;
  request.name.guest_path = guest_path;
  CreateDecision decision = DecideCreate(request, ctx.rules);
  if (c.set_id && decision.reason != CreateReason::kSetIdMode) {
    // Not reached (the decision refuses every set-id mode first); never the kernel's anyway.
    return Errno(EPERM);
  }
  return CarryOut(ctx, std::move(decision));
}

CreateVerdict Emulate(const Context& ctx, const TrappedCall& c) {
  if (c.set_id) return DecideByMode(ctx, c, SetIdTargetOf(ctx, c));
  switch (c.route) {
    case CreateRoute::kOpen:
      return EmulateOpen(ctx, c);
    case CreateRoute::kMkdir:
    case CreateRoute::kMknod:
    case CreateRoute::kSymlink:
      return EmulateMake(ctx, c);
    case CreateRoute::kLink:
      return EmulateLink(ctx, c);
    case CreateRoute::kRename:
      return EmulateRename(ctx, c);
    case CreateRoute::kChmod:
      return DecideByMode(ctx, c, "");
  }
  return Errno(ENOSYS);
}

}  // namespace

absl::StatusOr<CreateVerdict> CreateEmulator::Decide(const seccomp_notif& call,
                                                     SeccompListener& listener) {
  const pid_t tid = static_cast<pid_t>(call.pid);
  // Only x86_64 calls reach us (the filter kills other ABIs); their numbers are these.
  if (call.data.arch != AUDIT_ARCH_X86_64) return Errno(ENOSYS);

  absl::StatusOr<TraceeIdentity> id = tracee_.Identity(tid);
  if (absl::IsNotFound(id.status())) return Drop();
  if (!id.ok()) return id.status();
  TrappedCall c;
  absl::Status read = DecodeTrappedCall(call, *id, tracee_, &c);
  if (absl::IsNotFound(read)) return Drop();
  // A bad argument (EFAULT, EBADF, ENAMETOOLONG, EINVAL...): the kernel answers exactly, but
  // never for a set-id mode (a racing thread could make the argument good by then).
  if (!read.ok() && !c.set_id) return Continue();
  if (!read.ok()) {
    CreateVerdict verdict = DecideByMode(Context{tracee_, rules_, listener, call.id, *id}, c, "");
    if (verdict.violation.has_value()) {
      verdict.violation->syscall = c.syscall;
      verdict.violation->pid = tid;
    }
    return verdict;
  }
  if (absl::Status entered = tracee_.EnterRoot(tid); !entered.ok()) {
    if (absl::IsNotFound(entered)) return Drop();
    return entered;
  }
  // The first EnterRoot named the sandbox by a tid too: prove it before trusting it.
  if (!entered_confirmed_) {
    if (!listener.IdValid(call.id).ok()) {
      return absl::InternalError(
          "create supervisor: the first caller vanished while we entered its mount namespace; "
          "cannot be sure it was the sandbox's");
    }
    entered_confirmed_ = true;
  }

  if (absl::Status became = tracee_.BecomeTracee(*id); !became.ok()) {
    tracee_.BecomeSelf().IgnoreError();
    return became;
  }
  CreateVerdict verdict = Emulate(Context{tracee_, rules_, listener, call.id, *id}, c);
  if (absl::Status back = tracee_.BecomeSelf(); !back.ok()) return back;
  if (verdict.violation.has_value()) {
    verdict.violation->syscall = c.syscall;
    verdict.violation->pid = tid;
  }
  return verdict;
}

}  // namespace ccsandbox::launcher
