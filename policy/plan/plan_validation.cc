#include "policy/plan/plan_validation.h"

#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "policy/plan/filename_patterns.h"
#include "policy/plan/input_limits.h"
#include "policy/plan/push_wiring.h"
#include "policy/plan/trusted_names.h"
#include "policy/plan/workdir_visible.h"

namespace ccsandbox::policy {
namespace {

// What kind of call the plan is: a run id, a backend the launcher runs, a command unless it
// starts a warm sandbox.
absl::Status CheckStart(const v1::LaunchPlan& plan, const PlanLimits& limits) {
  if (plan.run_id().empty()) return absl::InvalidArgumentError("runId: is required");
  if (plan.backend() != v1::SANDBOX_BACKEND_NATIVE && plan.backend() != v1::SANDBOX_BACKEND_NONE) {
    return absl::InvalidArgumentError("backend: the launcher runs native or none plans only");
  }
  if (limits.sandbox_start) {
    if (!plan.argv().empty()) {
      return absl::InvalidArgumentError("argv: a sandbox start has no command");
    }
    if (!plan.sandbox_id().empty() || plan.backend() != v1::SANDBOX_BACKEND_NATIVE) {
      return absl::InvalidArgumentError("backend: only a native plan starts a warm sandbox");
    }
  } else if (plan.argv().empty() || plan.argv(0).empty()) {
    return absl::InvalidArgumentError("argv: the command is empty");
  }
  return absl::OkStatus();
}

// The host's network is the terminal profile's (spec: "the network is open") and nobody
// else's: a dispatch plan that asked for it would skip the egress allowlist.
absl::Status CheckTerminal(const v1::LaunchPlan& plan, const PlanLimits& limits) {
  if (!limits.terminal) {
    if (plan.open_network()) {
      return absl::InvalidArgumentError("openNetwork: only a terminal has the host's network");
    }
    return absl::OkStatus();
  }
  if (limits.sandbox_start || !plan.sandbox_id().empty()) {
    return absl::InvalidArgumentError("sandboxId: a terminal runs in no warm sandbox");
  }
  if (plan.has_egress()) {
    return absl::InvalidArgumentError(
        "egress: a terminal's profile has the host's network, not the proxies");
  }
  return absl::OkStatus();
}

// A run in a warm sandbox brings only its own fields: the sandbox's are fixed at its start.
absl::Status CheckWarmRun(const v1::LaunchPlan& plan) {
  if (plan.sandbox_id().empty()) return absl::OkStatus();
  if (plan.backend() != v1::SANDBOX_BACKEND_NATIVE) {
    return absl::InvalidArgumentError("sandboxId: only native runs have a warm sandbox");
  }
  if (plan.mounts_size() > 0 || plan.deny_read_paths_size() > 0 ||
      plan.deny_write_paths_size() > 0 || plan.has_egress() || plan.has_create_guard() ||
      plan.forbidden_dirs_size() > 0 || plan.has_resources()) {
    return absl::InvalidArgumentError(
        "sandboxId: a run in a warm sandbox takes the sandbox's mounts, deny sets, egress, "
        "create guard and resources; it may not bring its own");
  }
  return absl::OkStatus();
}

absl::Status CheckMounts(const v1::LaunchPlan& plan, const PlanLimits& limits) {
  for (int i = 0; i < plan.mounts_size(); ++i) {
    const v1::PlanMount& mount = plan.mounts(i);
    const std::string field = absl::StrCat("mounts[", i, "]");
    if (absl::Status s = CheckNormalizedAbsolute(field + ".hostPath", mount.host_path()); !s.ok()) {
      return s;
    }
    if (mount.host_path() == "/") {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".hostPath: binding '/' would expose the whole host"));
    }
    // The none backend mounts nothing (a spec's guestPath may differ there, ValidateSpec).
    if (plan.backend() == v1::SANDBOX_BACKEND_NATIVE && mount.guest_path() != mount.host_path()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".guestPath: must equal hostPath on the native backend"));
    }
    // bwrap mounts in order: a parent after its child covers it, and the deny-write rendering,
    // which takes the deepest mount as the one in force, would leave a protected path writable.
    for (int j = 0; j < i; ++j) {
      const std::string& earlier = plan.mounts(j).guest_path();
      if (earlier != mount.guest_path() && IsUnderOrEqual(earlier, mount.guest_path())) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ".guestPath: ", QuoteInput(mount.guest_path()), " comes after mounts[", j, "] ",
            QuoteInput(earlier), " beneath it; list parents first"));
      }
    }
    for (const std::string& dir : limits.forbidden_dirs) {
      if (IsUnderOrEqual(dir, mount.host_path()) || IsUnderOrEqual(mount.host_path(), dir)) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".hostPath: ", QuoteInput(mount.host_path()),
                         " overlaps the launcher's socket directory '", dir, "'"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDenyPaths(const v1::LaunchPlan& plan) {
  for (const auto& [field, paths] : {std::pair{"denyReadPaths", &plan.deny_read_paths()},
                                     std::pair{"denyWritePaths", &plan.deny_write_paths()}}) {
    for (int i = 0; i < paths->size(); ++i) {
      const std::string& path = (*paths)[i];
      if (IsGlob(path) && !path.empty() && path[0] == '/') continue;
      if (absl::Status s = CheckNormalizedAbsolute(absl::StrCat(field, "[", i, "]"), path);
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckEgress(const v1::LaunchPlan& plan, const PlanLimits& limits) {
  if (!plan.has_egress()) return absl::OkStatus();
  if (plan.backend() != v1::SANDBOX_BACKEND_NATIVE) {
    return absl::InvalidArgumentError("egress: only native plans route through proxies");
  }
  // Loopback ports are reachable from the sandbox only where it shares the host's loopback
  // (macOS); here the network namespace has none of the host's, and no socket to bridge.
  if (plan.egress().http_port() != 0 || plan.egress().socks_port() != 0 ||
      !plan.egress().http_proxy_url().empty() || !plan.egress().socks_proxy_url().empty()) {
    return absl::InvalidArgumentError(
        "egress.httpPort: loopback-port egress is the macOS launch's; this launcher bridges the "
        "proxies' Unix sockets (egress.httpSocket, egress.socksSocket)");
  }
  for (const auto& [field, path] : {std::pair{"egress.httpSocket", &plan.egress().http_socket()},
                                    std::pair{"egress.socksSocket", &plan.egress().socks_socket()},
                                    std::pair{"egress.pushSocket", &plan.egress().push_socket()}}) {
    if (path->empty() && field == std::string_view("egress.pushSocket")) continue;  // no gateway
    if (absl::Status s = CheckNormalizedAbsolute(field, *path); !s.ok()) return s;
    // The bridge would hand the sandbox a connection to whatever listens there: never the
    // launcher's own socket, which could run commands outside the sandbox.
    for (const std::string& dir : limits.forbidden_dirs) {
      if (IsUnderOrEqual(*path, dir)) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": ", QuoteInput(*path), " is in the launcher's socket directory '", dir, "'"));
      }
    }
  }
  const std::vector<std::string> repositories(plan.egress().push_repositories().begin(),
                                              plan.egress().push_repositories().end());
  if (absl::Status s = ValidatePushRepositories(repositories); !s.ok()) return s;
  if (!repositories.empty() && plan.egress().push_socket().empty()) {
    return absl::InvalidArgumentError("egress.pushRepositories: no push gateway socket");
  }
  return absl::OkStatus();
}

absl::Status CheckCreateGuard(const v1::LaunchPlan& plan) {
  if (!plan.has_create_guard()) return absl::OkStatus();
  if (plan.backend() != v1::SANDBOX_BACKEND_NATIVE) {
    return absl::InvalidArgumentError("createGuard: only native plans have a create guard");
  }
  for (int i = 0; i < plan.create_guard().protected_paths_size(); ++i) {
    if (absl::Status s =
            CheckNormalizedAbsolute(absl::StrCat("createGuard.protectedPaths[", i, "]"),
                                    plan.create_guard().protected_paths(i));
        !s.ok()) {
      return s;
    }
  }
  std::vector<std::string> rules(plan.create_guard().trusted_names().begin(),
                                 plan.create_guard().trusted_names().end());
  if (absl::StatusOr<TrustedNameRules> valid =
          TrustedNameRules::Create(rules, "createGuard.trustedNames");
      !valid.ok()) {
    return valid.status();
  }
  std::vector<std::string> patterns(plan.create_guard().deny_patterns().begin(),
                                    plan.create_guard().deny_patterns().end());
  if (absl::StatusOr<FilenamePatterns> valid = FilenamePatterns::Create(patterns); !valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("createGuard.denyPatterns: ", valid.status().message()));
  }
  return absl::OkStatus();
}

// Where the command starts: an absolute path, and for a native run one the sandbox has (the
// broker checked the same; a plan that bypassed it must not start elsewhere).
absl::Status CheckWorkdir(const v1::LaunchPlan& plan, const PlanLimits& limits) {
  if (absl::Status s = CheckNormalizedAbsolute("workdir", plan.workdir()); !s.ok()) return s;
  if (plan.backend() != v1::SANDBOX_BACKEND_NATIVE) return absl::OkStatus();
  const google::protobuf::RepeatedPtrField<v1::PlanMount> none;
  const google::protobuf::RepeatedPtrField<v1::PlanMount>& mounts =
      plan.sandbox_id().empty()          ? plan.mounts()
      : limits.sandbox_mounts != nullptr ? *limits.sandbox_mounts
                                         : none;
  return CheckWorkdirVisible("workdir", plan.workdir(), {mounts.begin(), mounts.end()});
}

}  // namespace

absl::Status ValidatePlan(const v1::LaunchPlan& plan, const PlanLimits& limits) {
  // In order, each only once the ones before hold (sizes first: nothing big is parsed).
  if (absl::Status s = CheckPlanLimits(plan); !s.ok()) return s;
  if (absl::Status s = CheckStart(plan, limits); !s.ok()) return s;
  if (absl::Status s = CheckWarmRun(plan); !s.ok()) return s;
  if (absl::Status s = CheckTerminal(plan, limits); !s.ok()) return s;
  if (absl::Status s = CheckMounts(plan, limits); !s.ok()) return s;
  if (absl::Status s = CheckDenyPaths(plan); !s.ok()) return s;
  if (absl::Status s = CheckEgress(plan, limits); !s.ok()) return s;
  if (absl::Status s = CheckCreateGuard(plan); !s.ok()) return s;
  return CheckWorkdir(plan, limits);
}

}  // namespace ccsandbox::policy
