// The launcher's resource limits: whether it enforces them (cgroups found and usable, unless
// turned off), with what defaults and ceilings, and the boot line that says so.
//
//   absl::StatusOr<ResourceLimitsConfig> limits = SetUpResourceLimits(flags);
//   config.resources = *std::move(limits);
#ifndef CCSANDBOX_LAUNCHER_CGROUPS_LAUNCHER_CGROUPS_H_
#define CCSANDBOX_LAUNCHER_CGROUPS_LAUNCHER_CGROUPS_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "launcher/cgroups/cgroup.h"
#include "launcher/cgroups/cgroup_pool.h"
#include "launcher/cgroups/resource_policy.h"

namespace ccsandbox::launcher {

struct ResourceLimitsFlags {
  std::string mode = "auto";  // --cgroups: auto (use them where the host has them) | off
  std::string socket_path;    // names this launcher's cgroup directory
  // --cgroup-fs: only cgroup file systems mounted at or below it are used (empty: any).
  std::string fs_root;
  uint64_t max_pids = 0;
  uint64_t max_memory_bytes = 0;
  uint32_t max_cpu_millicores = 0;
};

struct ResourceLimitsConfig {
  std::optional<CgroupHierarchy> cgroups;  // unset: limits are not enforced
  std::shared_ptr<CgroupPool> pool;        // session cgroups, made ahead and removed behind
  std::string reason;                      // how they are enforced, or why not
  ResourcePolicy policy;
};

// Detects the cgroups (making this launcher's directory, named after its socket, below its own
// cgroup in each hierarchy), kills and removes what a previous launcher on the same socket left
// there, and logs one line. INVALID_ARGUMENT for a bad --cgroups value; a host without usable
// cgroups is not an error (reason says why).
absl::StatusOr<ResourceLimitsConfig> SetUpResourceLimits(const ResourceLimitsFlags& flags);

// A cgroup name for `id` (a run or sandbox id): [A-Za-z0-9._-] kept, the rest '_', at most
// 200 bytes.
std::string CgroupLeafFor(const std::string& prefix, const std::string& id);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CGROUPS_LAUNCHER_CGROUPS_H_
