// exec_bench's resource figures, read from /proc (proc_usage.h); they print and assert nothing.
//
//   F  memory: the launcher, the broker and every descendant of the launcher (the sandboxes),
//      Pss (VmRSS where smaps_rollup is unreadable) and VmRSS, with 0 sessions, 1 idle session
//      and `sessions` idle sessions (all with A's spec), then after destroying them all; the
//      increment per session.
//   G  leak check: `execs` Execs of `true` in one session: both daemons' descriptors, VmRSS and
//      threads before and after, and the launcher's descendants after (against the idle count).
#ifndef CCSANDBOX_TESTS_BENCH_RESOURCE_FIGURES_H_
#define CCSANDBOX_TESTS_BENCH_RESOURCE_FIGURES_H_

#include "absl/status/status.h"
#include "tests/bench/bench_setup.h"

namespace ccsandbox::bench {

absl::Status FigureMemory(const BenchSetup& setup, int sessions);
absl::Status FigureLeaks(const BenchSetup& setup, int execs);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_RESOURCE_FIGURES_H_
