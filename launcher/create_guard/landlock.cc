#include "launcher/create_guard/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher {
namespace {

constexpr uint64_t kMakeAccess = LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
                                 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                                 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                                 LANDLOCK_ACCESS_FS_MAKE_SYM;

// The ruleset attribute as of ABI 6 (the system header may predate its later fields).
struct RulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;  // ABI 4
  uint64_t scoped = 0;              // ABI 6
};
constexpr uint64_t kScopeAbstractUnixSocket = uint64_t{1} << 0;  // ..._ABSTRACT_UNIX_SOCKET
constexpr uint64_t kScopeSignal = uint64_t{1} << 1;              // LANDLOCK_SCOPE_SIGNAL
constexpr int kScopeAbi = 6;

// Creates a ruleset handling `handled` file-system accesses and, when the kernel has it,
// scoping signals and abstract Unix sockets to the domain. Threat: a sandbox that shares the
// host's network (a terminal) would otherwise connect to the host's abstract sockets (X11,
// D-Bus, containerd's shims), which are per network namespace, not per file system.
absl::StatusOr<UniqueFd> CreateRuleset(uint64_t handled, int abi) {
  RulesetAttr attr;
  attr.handled_access_fs = handled;
  size_t size = sizeof(attr.handled_access_fs);
  if (abi >= kScopeAbi) {
    attr.scoped = kScopeSignal | kScopeAbstractUnixSocket;
    size = sizeof(attr);
  }
  UniqueFd ruleset(static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0)));
  if (!ruleset.valid()) {
    return absl::InternalError(absl::StrCat("Landlock: create_ruleset: ", strerror(errno)));
  }
  return ruleset;
}

absl::Status RestrictSelf(const UniqueFd& ruleset) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return absl::InternalError(absl::StrCat("prctl(PR_SET_NO_NEW_PRIVS): ", strerror(errno)));
  }
  if (syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0) {
    return absl::InternalError(absl::StrCat("Landlock: restrict_self: ", strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

bool SignalScopeAvailable(int abi) { return abi >= kScopeAbi; }

absl::Status ScopeSignals() {
  absl::StatusOr<int> abi = LandlockAbi();
  if (!abi.ok()) return abi.status();
  if (!SignalScopeAvailable(*abi)) {
    return absl::UnavailableError(
        absl::StrCat("Landlock ABI ", *abi, " cannot scope signals (needs ABI 6, Linux 6.12+)"));
  }
  absl::StatusOr<UniqueFd> ruleset = CreateRuleset(0, *abi);
  if (!ruleset.ok()) return ruleset.status();
  return RestrictSelf(*ruleset);
}

absl::StatusOr<int> LandlockAbi() {
  const long abi =
      syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi >= 1) return static_cast<int>(abi);
  if (errno == ENOSYS) {
    return absl::UnavailableError("Landlock: the kernel is built without it (needs Linux 5.13+)");
  }
  if (errno == EOPNOTSUPP) {
    return absl::UnavailableError(
        "Landlock: disabled at boot; add \"landlock\" to the kernel's lsm= "
        "parameter");
  }
  return absl::UnavailableError(absl::StrCat("Landlock: ", strerror(errno)));
}

absl::Status RestrictCreationTo(const std::vector<std::string>& dirs,
                                const std::vector<std::string>& socket_dirs) {
  absl::StatusOr<int> abi = LandlockAbi();
  if (!abi.ok()) return abi.status();
  // REFER (ABI 2) is always denied once a ruleset is in force; handling it is
  // what lets us grant it beneath `dirs`.
  const uint64_t handled = kMakeAccess | (*abi >= 2 ? LANDLOCK_ACCESS_FS_REFER : 0);
  absl::StatusOr<UniqueFd> created = CreateRuleset(handled, *abi);
  if (!created.ok()) return created.status();
  const UniqueFd& ruleset = *created;
  std::vector<std::pair<std::string, uint64_t>> rules;
  for (const std::string& dir : dirs) rules.emplace_back(dir, handled);
  for (const std::string& dir : socket_dirs) rules.emplace_back(dir, LANDLOCK_ACCESS_FS_MAKE_SOCK);
  for (const auto& [dir, allowed] : rules) {
    UniqueFd fd(open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) {
      return absl::FailedPreconditionError(
          absl::StrCat("Landlock: cannot open ", dir, ": ", strerror(errno)));
    }
    landlock_path_beneath_attr rule{};
    rule.allowed_access = allowed;
    rule.parent_fd = fd.get();
    if (syscall(SYS_landlock_add_rule, ruleset.get(), LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
      return absl::InternalError(
          absl::StrCat("Landlock: add_rule for ", dir, ": ", strerror(errno)));
    }
  }
  return RestrictSelf(ruleset);
}

}  // namespace ccsandbox::launcher
