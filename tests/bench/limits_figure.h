// exec_bench's figure H, the cost of resource limits:
//
//   H  warm Exec of `true` and a Launch (+ Destroy) on the main daemons (the launcher with
//      --cgroups=auto: limits where the host has cgroups) vs a second pair started with
//      --cgroups=off, run by run; and the accounting read an Exec's end makes (Cgroup::Usage of
//      a real cgroup, in this process, root only).
//
// Prints medians, p90s and the ratios (target <= 1.05); asserts nothing.
#ifndef CCSANDBOX_TESTS_BENCH_LIMITS_FIGURE_H_
#define CCSANDBOX_TESTS_BENCH_LIMITS_FIGURE_H_

#include "absl/status/status.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/bench/bench_setup.h"

namespace ccsandbox::bench {

absl::Status FigureLimits(const BenchSetup& with_limits, v1::SandboxBroker::Stub& without_limits,
                          int runs);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_LIMITS_FIGURE_H_
