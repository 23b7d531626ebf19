// What a process holds, read from /proc: memory (VmRSS, and Pss from smaps_rollup when it is
// readable), open descriptors, threads; and a process's descendants. Bench-only; a process that
// is gone (or unreadable) reads as zeros, never as an error.
//
//   ProcessUsage launcher = ReadUsage(launcher_pid);
//   ProcessUsage sandboxes = SumUsage(Descendants(launcher_pid));
#ifndef CCSANDBOX_TESTS_BENCH_PROC_USAGE_H_
#define CCSANDBOX_TESTS_BENCH_PROC_USAGE_H_

#include <sys/types.h>

#include <chrono>
#include <vector>

namespace ccsandbox::bench {

struct ProcessUsage {
  int processes = 0;      // how many processes this sums
  long rss_kib = 0;       // VmRSS
  long pss_kib = 0;       // Pss (smaps_rollup); VmRSS where that is not readable
  int pss_fallbacks = 0;  // processes whose Pss could not be read (counted with VmRSS)
  long fds = 0;           // entries of /proc/PID/fd
  long threads = 0;
};

ProcessUsage ReadUsage(pid_t pid);
ProcessUsage SumUsage(const std::vector<pid_t>& pids);
ProcessUsage operator+(const ProcessUsage& a, const ProcessUsage& b);

// Every live process below `root` (children, their children, …), from one scan of /proc. A
// process that left the tree (reparented elsewhere) is not found.
std::vector<pid_t> Descendants(pid_t root);

// Polls Descendants(root) until there are `count` of them or `timeout` passes; the last count.
int AwaitDescendantCount(pid_t root, int count, std::chrono::milliseconds timeout);

double MiB(long kib);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_PROC_USAGE_H_
