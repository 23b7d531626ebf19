// Control groups for sandboxes: one per session, one per run below it, on cgroup v2 or on the
// v1 controllers (memory, pids, cpu, cpuacct, freezer) — whichever the host has. The launcher
// (root) makes them below its own cgroup in each hierarchy, under a directory of its own name.
//
//   absl::StatusOr<CgroupHierarchy> tree = CgroupHierarchy::Detect("ccsandbox");
//   absl::StatusOr<std::unique_ptr<Cgroup>> session = tree->Create("s-42");
//   (*session)->SetLimits({.pids_max = 4096, .memory_max_bytes = 2 << 30});
//   child: write "0" into each of (*session)->ProcsFiles() before exec   (joins it)
//   (*session)->KillAll();  (*session)->Usage();  session->reset();   // killed and removed
//
// Every process in a cgroup stays in it or below it: a sandboxed command cannot move out (it
// sees no cgroup file system it can write). So KillAll ends every process of a run, whatever it
// did to its session, process group or parent, and nothing outlives Remove.
#ifndef CCSANDBOX_LAUNCHER_CGROUPS_CGROUP_H_
#define CCSANDBOX_LAUNCHER_CGROUPS_CGROUP_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::launcher {

enum class CgroupVersion { kV1, kV2 };

// 0 = no limit for each field.
struct CgroupLimits {
  uint64_t pids_max = 0;          // processes and threads
  uint64_t memory_max_bytes = 0;  // RAM
  uint64_t swap_max_bytes = 0;    // swap on top of memory_max_bytes (needs memory_max_bytes)
  uint32_t cpu_weight = 0;        // 1..10000, 100 = the default share
  uint32_t cpu_millicores = 0;    // a hard quota: 1000 = one CPU
};

// What the controllers counted.
struct CgroupUsage {
  uint64_t memory_peak_bytes = 0;
  uint64_t cpu_usage_us = 0;
  uint64_t oom_kills = 0;      // processes the OOM killer ended for the memory limit
  uint64_t pids_max_hits = 0;  // forks refused at pids_max
  uint64_t pids_current = 0;   // processes and threads now
  // The most at once since the cgroup was made, where the kernel keeps it (pids.peak, v1 and v2
  // on recent kernels), else 0.
  uint64_t pids_peak = 0;
};

class Cgroup;

// One hierarchy's directory and the controllers it has.
struct CgroupDir {
  std::string path;
  std::vector<std::string> controllers;  // v2: those enabled for it
};

class CgroupHierarchy {
 public:
  // Finds the controllers the launcher can use (v2 when the unified hierarchy has memory and
  // pids; else the v1 memory, pids, cpu, cpuacct and freezer mounts) and makes `name` below the
  // caller's own cgroup in each. Only cgroup file systems mounted at or below `fs_root` count
  // (empty: wherever they are). UNAVAILABLE saying what is missing.
  static absl::StatusOr<CgroupHierarchy> Detect(const std::string& name,
                                                const std::string& fs_root = "");
  // The same from given texts (/proc/self/mountinfo, /proc/self/cgroup) and `read` (a file's
  // text: a v2 mount's cgroup.controllers); makes no directory.
  static absl::StatusOr<CgroupHierarchy> FromTables(
      absl::string_view mountinfo, absl::string_view self_cgroup, const std::string& name,
      const std::function<std::string(const std::string&)>& read, const std::string& fs_root = "");

  CgroupVersion version() const { return version_; }
  // Where it makes cgroups, for the boot line: "cgroup v1 (memory, pids, ...) below ...".
  std::string Describe() const;
  // The directories it makes cgroups in, one per hierarchy.
  const std::vector<CgroupDir>& roots() const { return roots_; }

  // Makes (or reuses) the cgroup `leaf` below the roots, or below `parent`.
  absl::StatusOr<std::unique_ptr<Cgroup>> Create(const std::string& leaf,
                                                 const Cgroup* parent = nullptr) const;
  // Kills and removes every cgroup found below the roots (left by a launcher that died);
  // returns how many (by name).
  int RemoveLeftovers() const;
  // Kills and removes everything below the roots, then the roots themselves: what an orderly
  // stop of the launcher leaves is nothing.
  absl::Status RemoveAll() const;

 private:
  CgroupVersion version_ = CgroupVersion::kV2;
  std::vector<CgroupDir> roots_;  // v2: one; v1: one per distinct controller mount
};

class Cgroup {
 public:
  ~Cgroup();  // KillAll, then Remove: nothing of it stays
  Cgroup(const Cgroup&) = delete;
  Cgroup& operator=(const Cgroup&) = delete;

  CgroupVersion version() const { return version_; }
  const std::vector<CgroupDir>& dirs() const { return dirs_; }
  // Makes (or reuses) the cgroup `leaf` below this one (a run below its session); with `only`,
  // in the v1 hierarchies of those controllers only.
  absl::StatusOr<std::unique_ptr<Cgroup>> CreateChild(
      const std::string& leaf, const std::vector<std::string>& only = {}) const;
  absl::Status SetLimits(const CgroupLimits& limits);
  // Its pids.max (0 when unlimited or unknown).
  uint64_t PidsMax() const;
  // The cgroup.procs files a process writes "0" into to join (one per hierarchy).
  std::vector<std::string> ProcsFiles() const;
  absl::Status AddProcess(pid_t pid);
  // Kills every process in it and below, until none is left.
  absl::Status KillAll();
  // Freezes (or thaws) every process in it and waits until all have stopped (or run again);
  // DEADLINE_EXCEEDED after 5 s (a freeze is then undone), UNIMPLEMENTED without a freezer.
  absl::Status Freeze(bool frozen);
  bool CanFreeze() const;
  absl::StatusOr<CgroupUsage> Usage() const;
  // Removes its directories (children first); fails while a process is left.
  absl::Status Remove();
  // Leaves its directories to whoever removes an ancestor (no kill, no removal here).
  void Forget() { removed_ = true; }

 private:
  absl::Status RequestFreeze(bool frozen);  // asks, without waiting
  bool IsFrozen() const;
  friend class CgroupHierarchy;
  Cgroup(CgroupVersion version, std::vector<CgroupDir> dirs)
      : version_(version), dirs_(std::move(dirs)) {}
  // The directory of the hierarchy that has `controller` ("" when none).
  std::string DirOf(absl::string_view controller) const;

  const CgroupVersion version_;
  const std::vector<CgroupDir> dirs_;
  bool removed_ = false;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CGROUPS_CGROUP_H_
