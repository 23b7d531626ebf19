// Test support: what a pair of daemons holds on the host — the processes below them, their open
// descriptors, mounts and files under given directories, their cgroup directories — counted
// before a workload and again after, so a test can assert that nothing leaked.
//
//   const LeakCensus before = LeakCensus::Take(daemons, {work});
//   ... the workload ...
//   EXPECT_TRUE(LeakCensus::SettlesTo(before, daemons, {work}, absl::Seconds(30)));
#ifndef CCSANDBOX_TESTS_LEAK_CENSUS_H_
#define CCSANDBOX_TESTS_LEAK_CENSUS_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {

// A process by pid and start time (clock ticks after boot), so a recycled pid is not taken for
// the process it replaced.
struct ProcessId {
  pid_t pid = 0;
  unsigned long long start_ticks = 0;
  std::string comm;
};

// Live (not zombie) processes below `root`, `root` excluded.
std::vector<ProcessId> Descendants(pid_t root);
// True while that very process runs and is not a zombie.
bool StillRuns(const ProcessId& process);
// What the entries of /proc/PID/fd point at, inode numbers dropped -> how many.
std::map<std::string, int> OpenFds(pid_t pid);
int Total(const std::map<std::string, int>& counts);

struct LeakCensus {
  std::map<std::string, int> processes;  // comm -> how many, below either daemon
  // What each daemon's descriptors point at ("socket", "pipe", "anon_inode:[eventfd]", a path)
  // -> how many.
  std::map<std::string, int> launcher_fds;
  std::map<std::string, int> broker_fds;
  std::vector<std::string> mounts;  // mount points under the given directories
  // How many cgroups each of the launcher's cgroup directories holds (the pool names its
  // cgroups afresh as it makes them ahead, so only the number says whether one leaked).
  std::map<std::string, int> cgroups;
  std::vector<std::string> files;  // entries under the daemons' directories (sockets included)

  // `dirs`: more directories whose mounts and files count (work trees).
  static LeakCensus Take(const Daemons& daemons, const std::vector<std::string>& dirs = {});
  // What differs from `before`, one line per difference; "" when nothing does.
  std::string DifferencesFrom(const LeakCensus& before) const;
  // Waits up to `timeout` for a census equal to `before` (pools and gRPC's own descriptors
  // settle after a workload), else fails listing the differences.
  static ::testing::AssertionResult SettlesTo(const LeakCensus& before, const Daemons& daemons,
                                              const std::vector<std::string>& dirs,
                                              absl::Duration timeout);
};

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_LEAK_CENSUS_H_
