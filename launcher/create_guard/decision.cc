#include "launcher/create_guard/decision.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <linux/fs.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "base/paths.h"

namespace ccsandbox::launcher {
namespace {

constexpr char kUnnamedDirectoryRule[] = "(a directory the supervisor cannot name)";
constexpr char kSetIdRule[] = "S_ISUID/S_ISGID";

CreateDecision Kernel(CreateReason reason) { return {CreateAction::kKernel, reason}; }

CreateDecision Fail(CreateReason reason, int error, std::string rule = "") {
  return {CreateAction::kFail, reason, error, std::move(rule)};
}

CreateDecision Perform() { return {CreateAction::kPerform, CreateReason::kAllowed}; }

// A rule that refuses a name, and which kind of rule it is.
struct Hit {
  CreateReason reason;
  std::string rule;
};

// The host path of a name, for the violation, mapped through the run's mounts.
std::string HostTarget(const NameFacts& name, const CreateRules& rules) {
  return name.guest_path.empty() ? name.name : policy::HostPathFor(name.guest_path, rules.mounts);
}

CreateDecision Deny(const NameFacts& name, Hit hit, const CreateRules& rules) {
  return {CreateAction::kDeny, hit.reason, EACCES, std::move(hit.rule), HostTarget(name, rules)};
}

// A protected path is a path, or a glob over whole components ("/w/build-*"): `path` is at or
// below one of its matches (`below`), or above one (`above`: a directory made there could hold a
// match). A literal name with glob characters ("co*py") matches its glob.
bool Protects(absl::string_view protected_path, absl::string_view path, bool beneath) {
  if (!IsGlob(protected_path)) {
    return IsUnderOrEqual(path, protected_path) ||
           (beneath && IsUnderOrEqual(protected_path, path));
  }
  const std::vector<absl::string_view> glob =
      absl::StrSplit(protected_path, '/', absl::SkipEmpty());
  const std::vector<absl::string_view> name = absl::StrSplit(path, '/', absl::SkipEmpty());
  const size_t common = std::min(glob.size(), name.size());
  for (size_t i = 0; i < common; ++i) {
    const std::string pattern(glob[i]), component(name[i]);
    if (fnmatch(pattern.c_str(), component.c_str(), FNM_PERIOD) != 0) return false;
  }
  return name.size() >= glob.size() || beneath;
}

// The trusted-name rule a new name would break: what the host runs or trusts automatically
// (start-up files, git metadata, keys ...). `beneath`: the new name is a directory moved there
// or a symlink, so what it holds or points to counts too. Runner state dirs are exempt (the
// operator declared them writable); a directory we cannot name is refused (fail closed).
std::optional<Hit> TrustedRule(const NameFacts& name, bool beneath, const CreateRules& rules) {
  const std::string& guest = name.guest_path;
  if (guest.empty()) return Hit{CreateReason::kUnnamedDirectory, kUnnamedDirectoryRule};
  // Protected paths hold in runner state dirs too; a directory or symlink made above one
  // would bring it into being.
  for (const std::string& path : rules.protected_paths) {
    if (Protects(path, guest, beneath)) return Hit{CreateReason::kProtectedPath, path};
  }
  const policy::GuardMount* closest = nullptr;
  for (const policy::GuardMount& m : rules.mounts) {
    if (IsUnderOrEqual(guest, m.guest) &&
        (closest == nullptr || m.guest.size() >= closest->guest.size())) {
      closest = &m;
    }
  }
  if (closest != nullptr && closest->trusted_exempt) return std::nullopt;
  if (std::optional<std::string> rule = rules.trusted.Match(guest)) {
    return Hit{CreateReason::kTrustedName, std::move(*rule)};
  }
  if (beneath) {
    if (std::optional<std::string> rule = rules.trusted.MatchBeneath(guest)) {
      return Hit{CreateReason::kTrustedName, std::move(*rule)};
    }
  }
  return std::nullopt;
}

// A filename pattern on the name itself, else a trusted-name rule.
std::optional<Hit> Refusal(const NameFacts& name, bool beneath, const CreateRules& rules) {
  if (std::optional<std::string> pattern = rules.patterns.Match(name.name)) {
    return Hit{CreateReason::kFilenamePattern, std::move(*pattern)};
  }
  return TrustedRule(name, beneath, rules);
}

bool Exists(NameHolds holds) {
  return holds != NameHolds::kNothing && holds != NameHolds::kUnknown;
}

// S_ISUID / S_ISGID in a mode. A set-id file left in a bind runs with its owner's rights on
// the host: refused wherever the name is, as the seccomp baseline refuses it (a guarded run's
// baseline leaves these calls to us, to be reported).
bool SetsIdBits(mode_t mode) { return (mode & (S_ISUID | S_ISGID)) != 0; }

CreateDecision DenySetId(const NameFacts& name, const CreateRules& rules) {
  return {CreateAction::kDeny, CreateReason::kSetIdMode, EPERM, kSetIdRule,
          HostTarget(name, rules)};
}

CreateDecision DecideOpen(const CreateRequest& r, const CreateRules& rules) {
  if (SetsIdBits(r.mode)) return DenySetId(r.name, rules);
  if (r.open_flags & O_PATH) return Kernel(CreateReason::kOpenPath);
  if (!r.resolved) return Kernel(CreateReason::kUnresolved);
  if (r.name.in_procfs) return Kernel(CreateReason::kProcfs);
  if (r.name.in_free_dir) return Kernel(CreateReason::kFreeDir);
  // It exists: the kernel opens it and names nothing new. Should a race remove it first, the
  // kernel's creation outside the free dirs is refused by Landlock.
  if (r.name.holds != NameHolds::kNothing) return Kernel(CreateReason::kNameExists);
  if (r.name.trailing_slash) return Kernel(CreateReason::kTrailingSlash);
  if (std::optional<Hit> hit = Refusal(r.name, /*beneath=*/false, rules)) {
    return Deny(r.name, std::move(*hit), rules);
  }
  return Perform();
}

// A matching name that exists already: the call fails with EEXIST as it would, and nothing
// is reported (nothing new was named).
CreateDecision RefuseNew(const NameFacts& name, Hit hit, const CreateRules& rules) {
  if (Exists(name.holds)) return Fail(CreateReason::kExistsAndMatches, EEXIST, std::move(hit.rule));
  return Deny(name, std::move(hit), rules);
}

// mkdir, mknod, symlink: one new name, no symlink followed.
CreateDecision DecideMake(const CreateRequest& r, const CreateRules& rules) {
  if (r.route == CreateRoute::kMknod && SetsIdBits(r.mode)) return DenySetId(r.name, rules);
  if (!r.resolved) return Kernel(CreateReason::kUnresolved);
  if (r.name.in_free_dir) return Kernel(CreateReason::kFreeDir);
  // A new symlink can give a trusted name to anything it points to.
  if (std::optional<Hit> hit = Refusal(r.name, r.route == CreateRoute::kSymlink, rules)) {
    return RefuseNew(r.name, std::move(*hit), rules);
  }
  return Perform();
}

CreateDecision DecideLink(const CreateRequest& r, const CreateRules& rules) {
  if (!r.resolved) return Kernel(CreateReason::kUnresolved);
  if (r.name.in_free_dir) return Kernel(CreateReason::kFreeDir);
  if (std::optional<Hit> hit = Refusal(r.name, /*beneath=*/false, rules)) {
    return RefuseNew(r.name, std::move(*hit), rules);
  }
  if (!r.link_source_found) return Kernel(CreateReason::kNoLinkSource);
  return Perform();
}

CreateDecision DecideRename(const CreateRequest& r, const CreateRules& rules) {
  const unsigned flags = r.rename_flags;
  if ((flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) != 0 ||
      ((flags & RENAME_EXCHANGE) && (flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)))) {
    return Kernel(CreateReason::kRenameFlags);
  }
  // A whiteout is a character device (0:0) made at the source's name, by the supervisor if we
  // performed it: the sandbox may not make device nodes (Landlock refuses MAKE_CHAR).
  if (flags & RENAME_WHITEOUT) return Fail(CreateReason::kWhiteout, EPERM);
  if (!r.resolved) return Kernel(CreateReason::kUnresolved);
  // The names (re)filled: the destination; with RENAME_EXCHANGE the source's name too (it now
  // holds what was at the destination).
  std::vector<const NameFacts*> refilled = {&r.name};
  if (flags & RENAME_EXCHANGE) refilled.push_back(&r.source);
  bool all_free = true;
  for (const NameFacts* name : refilled) {
    if (name->in_free_dir) continue;
    all_free = false;
    // Replacing an existing matching name gives it new content: refused like a creation.
    if (std::optional<std::string> pattern = rules.patterns.Match(name->name)) {
      return Deny(*name, {CreateReason::kFilenamePattern, std::move(*pattern)}, rules);
    }
    // A directory or symlink moved here brings what it holds under the new name. Whatever is
    // moved is checked as if it were one: another writer on the tree can swap a plain file for
    // a prepared directory (RENAME_EXCHANGE) between this check and the kernel's rename.
    if (std::optional<Hit> hit = TrustedRule(*name, /*beneath=*/true, rules)) {
      return Deny(*name, std::move(*hit), rules);
    }
  }
  if (all_free) return Kernel(CreateReason::kFreeDir);
  return Perform();
}

CreateDecision DecideChmod(const CreateRequest& r, const CreateRules& rules) {
  if (SetsIdBits(r.mode)) return DenySetId(r.name, rules);
  return Kernel(CreateReason::kPlainMode);
}

}  // namespace

absl::StatusOr<CreateRules> CreateRules::Create(const std::vector<std::string>& deny_patterns,
                                                const std::vector<std::string>& trusted_names,
                                                std::vector<std::string> protected_paths,
                                                std::vector<policy::GuardMount> mounts) {
  absl::StatusOr<policy::FilenamePatterns> patterns =
      policy::FilenamePatterns::Create(deny_patterns);
  if (!patterns.ok()) return patterns.status();
  absl::StatusOr<policy::TrustedNameRules> trusted =
      policy::TrustedNameRules::Create(trusted_names);
  if (!trusted.ok()) return trusted.status();
  return CreateRules{std::move(*patterns), std::move(*trusted), std::move(protected_paths),
                     std::move(mounts)};
}

CreateDecision DecideCreate(const CreateRequest& request, const CreateRules& rules) {
  switch (request.route) {
    case CreateRoute::kOpen:
      return DecideOpen(request, rules);
    case CreateRoute::kMkdir:
    case CreateRoute::kMknod:
    case CreateRoute::kSymlink:
      return DecideMake(request, rules);
    case CreateRoute::kLink:
      return DecideLink(request, rules);
    case CreateRoute::kRename:
      return DecideRename(request, rules);
    case CreateRoute::kChmod:
      return DecideChmod(request, rules);
  }
  return Fail(CreateReason::kUnresolved, ENOSYS);
}

const char* CreateActionName(CreateAction action) {
  switch (action) {
    case CreateAction::kKernel:
      return "kernel";
    case CreateAction::kFail:
      return "fail";
    case CreateAction::kDeny:
      return "deny";
    case CreateAction::kPerform:
      return "perform";
  }
  return "?";
}

const char* CreateReasonName(CreateReason reason) {
  switch (reason) {
    case CreateReason::kOpenPath:
      return "o-path";
    case CreateReason::kSetIdMode:
      return "set-id-mode";
    case CreateReason::kRenameFlags:
      return "rename-flags";
    case CreateReason::kUnresolved:
      return "unresolved";
    case CreateReason::kProcfs:
      return "procfs";
    case CreateReason::kFreeDir:
      return "free-dir";
    case CreateReason::kNameExists:
      return "name-exists";
    case CreateReason::kTrailingSlash:
      return "trailing-slash";
    case CreateReason::kExistsAndMatches:
      return "exists-and-matches";
    case CreateReason::kFilenamePattern:
      return "pattern";
    case CreateReason::kTrustedName:
      return "trusted-name";
    case CreateReason::kProtectedPath:
      return "protected-path";
    case CreateReason::kUnnamedDirectory:
      return "unnamed-directory";
    case CreateReason::kNoLinkSource:
      return "no-link-source";
    case CreateReason::kPlainMode:
      return "plain-mode";
    case CreateReason::kWhiteout:
      return "whiteout";
    case CreateReason::kAllowed:
      return "allowed";
  }
  return "?";
}

}  // namespace ccsandbox::launcher
