// CPU time and wakeups of one process or thread, read from /proc, for the egress benchmarks
// (proxy_bench, egress_bench) to show what a transfer cost each end; and where the proxies'
// event loop thread ("egress-loop") keeps its counters. Bench-only; a task that is gone reads
// as zero.
//
//   const std::string loop = LoopThreadStat(broker_pid);  // "/proc/PID/task/TID/stat"
//   const double before = CpuSeconds(loop);
//   ... transfer ...
//   absl::PrintF("proxy %.2f s\n", CpuSeconds(loop) - before);
#ifndef CCSANDBOX_TESTS_BENCH_PROC_CPU_H_
#define CCSANDBOX_TESTS_BENCH_PROC_CPU_H_

#include <sys/types.h>

#include <string>

namespace ccsandbox::bench {

// CPU seconds (user + system) from a /proc/.../stat file; 0 when it is gone.
double CpuSeconds(const std::string& stat_path);

// Context switches (voluntary + involuntary) from a /proc/.../status file: how often the task
// slept or was preempted, i.e. the wakeups a transfer cost. 0 for "".
long ContextSwitches(const std::string& status_path);

// The status file beside a stat file ("" for "").
std::string StatusOf(const std::string& stat_path);

// The stat file of the "egress-loop" thread of process `pid` (the proxies' EventLoop), or "".
std::string LoopThreadStat(pid_t pid);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_PROC_CPU_H_
