// What a session's sandbox may use: the plan's requested resources over the launcher's
// defaults, checked against its ceilings. Pure.
//
//   ResourcePolicy policy = ResourcePolicyFor(host);   // from the launcher's flags
//   absl::StatusOr<CgroupLimits> limits = EffectiveLimits(plan.has_resources() ? &plan.resources()
//                                                                             : nullptr, policy);
#ifndef CCSANDBOX_LAUNCHER_CGROUPS_RESOURCE_POLICY_H_
#define CCSANDBOX_LAUNCHER_CGROUPS_RESOURCE_POLICY_H_

#include <string>

#include "absl/status/statusor.h"
#include "launcher/cgroups/cgroup.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::launcher {

inline constexpr uint64_t kDefaultPidsMax = 4096;
inline constexpr uint64_t kDefaultMemoryMaxBytes = uint64_t{4} << 30;
inline constexpr uint32_t kDefaultCpuWeight = 100;
inline constexpr uint32_t kMaxCpuWeight = 10000;
// The kernel's smallest CFS quota is 1 ms per period (100 ms here): 0.01 CPU.
inline constexpr uint32_t kMinCpuMillicores = 10;

struct ResourcePolicy {
  v1::SandboxResources defaults;  // what an unset field gets
  v1::SandboxResources ceilings;  // what no request may exceed (0 = no ceiling)
};

// The launcher's policy on a host with `host_memory_bytes` of RAM and `cpus` CPUs: defaults
// pids 4096, memory min(4 GiB, ceiling), no swap, weight 100, no quota; ceilings as given (0:
// pids 32768, memory = the host's, CPU = all of the host's).
ResourcePolicy MakeResourcePolicy(uint64_t host_memory_bytes, int cpus, uint64_t max_pids,
                                  uint64_t max_memory_bytes, uint32_t max_cpu_millicores);

// The limits for a request (null: none asked); INVALID_ARGUMENT naming the field
// ("resources.memoryMaxBytes: ...") for a value above its ceiling or out of range.
absl::StatusOr<CgroupLimits> EffectiveLimits(const v1::SandboxResources* requested,
                                             const ResourcePolicy& policy);

// "pids 4096, memory 4 GiB, swap 0, cpu weight 100, no cpu quota".
std::string DescribeLimits(const CgroupLimits& limits);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CGROUPS_RESOURCE_POLICY_H_
