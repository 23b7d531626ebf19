// A cgroup's counters as a run's exit and killed events (and the session's handle) carry them.
#ifndef CCSANDBOX_LAUNCHER_USAGE_PROTO_H_
#define CCSANDBOX_LAUNCHER_USAGE_PROTO_H_

#include "launcher/cgroups/cgroup.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::launcher {

inline v1::SandboxUsage UsageProto(const CgroupUsage& read) {
  v1::SandboxUsage usage;
  usage.set_memory_peak_bytes(read.memory_peak_bytes);
  usage.set_cpu_usage_us(read.cpu_usage_us);
  usage.set_oom_kills(read.oom_kills);
  usage.set_pids_max_hits(read.pids_max_hits);
  usage.set_pids_peak(read.pids_peak);
  return usage;
}

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_USAGE_PROTO_H_
