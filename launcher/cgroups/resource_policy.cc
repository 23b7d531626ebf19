#include "launcher/cgroups/resource_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ccsandbox::launcher {
namespace {

std::string Bytes(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0) {
    return absl::StrCat(bytes >> 30, " GiB");
  }
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0) {
    return absl::StrCat(bytes >> 20, " MiB");
  }
  return absl::StrCat(bytes, " bytes");
}

absl::Status Above(absl::string_view field, uint64_t value, uint64_t ceiling,
                   absl::string_view unit = "") {
  return absl::InvalidArgumentError(absl::StrCat("resources.", field, ": ", value, unit,
                                                 " is above this launcher's ceiling of ", ceiling,
                                                 unit));
}

}  // namespace

ResourcePolicy MakeResourcePolicy(uint64_t host_memory_bytes, int cpus, uint64_t max_pids,
                                  uint64_t max_memory_bytes, uint32_t max_cpu_millicores) {
  ResourcePolicy policy;
  policy.ceilings.set_pids_max(max_pids > 0 ? max_pids : 32768);
  policy.ceilings.set_memory_max_bytes(max_memory_bytes > 0 ? max_memory_bytes : host_memory_bytes);
  policy.ceilings.set_swap_max_bytes(policy.ceilings.memory_max_bytes());
  policy.ceilings.set_cpu_weight(kMaxCpuWeight);
  policy.ceilings.set_cpu_millicores(max_cpu_millicores > 0 ? max_cpu_millicores
                                                            : static_cast<uint32_t>(cpus) * 1000);
  policy.defaults.set_pids_max(std::min(kDefaultPidsMax, policy.ceilings.pids_max()));
  policy.defaults.set_memory_max_bytes(
      std::min(kDefaultMemoryMaxBytes, policy.ceilings.memory_max_bytes()));
  policy.defaults.set_cpu_weight(kDefaultCpuWeight);
  return policy;
}

absl::StatusOr<CgroupLimits> EffectiveLimits(const v1::SandboxResources* requested,
                                             const ResourcePolicy& policy) {
  const v1::SandboxResources none;
  const v1::SandboxResources& r = requested != nullptr ? *requested : none;
  const v1::SandboxResources& d = policy.defaults;
  const v1::SandboxResources& c = policy.ceilings;
  CgroupLimits limits;
  limits.pids_max = r.pids_max() > 0 ? r.pids_max() : d.pids_max();
  limits.memory_max_bytes = r.memory_max_bytes() > 0 ? r.memory_max_bytes() : d.memory_max_bytes();
  limits.swap_max_bytes = r.swap_max_bytes() > 0 ? r.swap_max_bytes() : d.swap_max_bytes();
  limits.cpu_weight = r.cpu_weight() > 0 ? r.cpu_weight() : d.cpu_weight();
  limits.cpu_millicores = r.cpu_millicores() > 0 ? r.cpu_millicores() : d.cpu_millicores();
  if (c.pids_max() > 0 && limits.pids_max > c.pids_max()) {
    return Above("pidsMax", limits.pids_max, c.pids_max());
  }
  if (c.memory_max_bytes() > 0 && limits.memory_max_bytes > c.memory_max_bytes()) {
    return Above("memoryMaxBytes", limits.memory_max_bytes, c.memory_max_bytes());
  }
  if (c.swap_max_bytes() > 0 && limits.swap_max_bytes > c.swap_max_bytes()) {
    return Above("swapMaxBytes", limits.swap_max_bytes, c.swap_max_bytes());
  }
  if (limits.cpu_weight > kMaxCpuWeight)
    return Above("cpuWeight", limits.cpu_weight, kMaxCpuWeight);
  if (c.cpu_millicores() > 0 && limits.cpu_millicores > c.cpu_millicores()) {
    return Above("cpuMillicores", limits.cpu_millicores, c.cpu_millicores());
  }
  if (r.pids_max() > 0 && r.pids_max() < 8) {
    return absl::InvalidArgumentError(
        "resources.pidsMax: below 8 the sandbox's own processes (bwrap, its init) cannot start");
  }
  if (r.memory_max_bytes() > 0 && r.memory_max_bytes() < (uint64_t{16} << 20)) {
    return absl::InvalidArgumentError("resources.memoryMaxBytes: below 16 MiB nothing runs");
  }
  if (r.cpu_millicores() > 0 && r.cpu_millicores() < kMinCpuMillicores) {
    return absl::InvalidArgumentError(
        absl::StrCat("resources.cpuMillicores: ", r.cpu_millicores(), " is below ",
                     kMinCpuMillicores, ", the kernel's smallest quota (1 ms of CPU per 100 ms)"));
  }
  return limits;
}

std::string DescribeLimits(const CgroupLimits& limits) {
  return absl::StrCat("pids ", limits.pids_max, ", memory ", Bytes(limits.memory_max_bytes),
                      " + swap ", Bytes(limits.swap_max_bytes), ", cpu weight ", limits.cpu_weight,
                      limits.cpu_millicores > 0
                          ? absl::StrFormat(", cpu quota %.2f CPUs", limits.cpu_millicores / 1000.0)
                          : std::string(", no cpu quota"));
}

}  // namespace ccsandbox::launcher
