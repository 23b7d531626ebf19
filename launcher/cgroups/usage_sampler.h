// A run's cgroup counters, read on every supervision wake-up (every 50 ms while it runs), keeping
// the largest process count seen: the run's pids high-water mark where the kernel keeps none for
// its own cgroup (a reused Exec cgroup's pids.peak counts earlier Execs too).
//
//   UsageSampler sampler([cg] { return Read(cg); });
//   if (std::optional<CgroupUsage> now = sampler.Sample()) now->pids_peak;  // the mark so far
#ifndef CCSANDBOX_LAUNCHER_CGROUPS_USAGE_SAMPLER_H_
#define CCSANDBOX_LAUNCHER_CGROUPS_USAGE_SAMPLER_H_

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "launcher/cgroups/cgroup.h"

namespace ccsandbox::launcher {

class UsageSampler {
 public:
  explicit UsageSampler(std::function<std::optional<CgroupUsage>()> read)
      : read_(std::move(read)) {}

  // The counters now, with pids_peak the largest of the kernel's mark and every count seen.
  std::optional<CgroupUsage> Sample() {
    std::optional<CgroupUsage> now = read_();
    if (!now.has_value()) return now;
    absl::MutexLock lock(&mu_);
    mark_ = std::max({mark_, now->pids_peak, now->pids_current});
    now->pids_peak = mark_;
    return now;
  }

 private:
  const std::function<std::optional<CgroupUsage>()> read_;
  absl::Mutex mu_;
  uint64_t mark_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CGROUPS_USAGE_SAMPLER_H_
