// From parsed Seatbelt denials to each run's violation events: drops known noise, attributes each
// denial to its run by pid tree, and folds retry storms (same run + action + target within a
// window) into one event with a count. Pure and clock-injected; not thread-safe (the caller, the
// macOS `log stream` reader, is one thread).
//
//   SeatbeltMonitor monitor(parent_of, now, absl::Seconds(1));
//   monitor.AddRun("run-1", sandbox_exec_pid);            // at launch
//   for (auto& e : monitor.Feed(line)) Emit(e);           // each `log stream` line
//   for (auto& e : monitor.Flush()) Emit(e);              // on a timer: storms whose window ended
//   for (auto& e : monitor.RemoveRun("run-1")) Emit(e);   // at exit: that run's open storms
//
// Attribution: the macOS launch knows the pid of the `sandbox-exec` it spawned (the run's root;
// Seatbelt profiles are inherited by every descendant), so a denial belongs to the run whose root
// is the denied pid or one of its ancestors. The profile carries no per-run tag: SBPL's
// `(with message ...)` is not reliably in the logged line across macOS versions, and the pid tree
// needs no profile change. A denied process that exited before its line was read has no parent
// to walk: pids already attributed are remembered per run, so a storm from one process stays
// attributed; otherwise the denial is dropped as unattributable (counted in unattributed()).
#ifndef CCSANDBOX_POLICY_VIOLATIONS_SEATBELT_MONITOR_H_
#define CCSANDBOX_POLICY_VIOLATIONS_SEATBELT_MONITOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "policy/violations/seatbelt_log.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

struct RunViolation {
  std::string run_id;
  v1::SandboxViolation violation;  // the storm's first denial (its raw line)
  int64_t pid = 0;                 // the first denial's process
  uint64_t count = 1;              // denials folded into this event
};

class SeatbeltMonitor {
 public:
  // The parent of a live pid, or nullopt (exited, or no such pid).
  using ParentOf = std::function<std::optional<int64_t>(int64_t pid)>;
  using Clock = std::function<absl::Time()>;

  // Deepest pid chain walked to find a run's root.
  static constexpr int kMaxAncestry = 128;
  // Most open storms held at once; past it the oldest is emitted early.
  static constexpr size_t kMaxOpenStorms = 1024;
  // Most exited-process pids remembered per run.
  static constexpr size_t kMaxKnownPids = 4096;

  SeatbeltMonitor(ParentOf parent_of, Clock clock, absl::Duration window);

  void AddRun(std::string run_id, int64_t root_pid);
  // Forgets the run; returns its open storms.
  std::vector<RunViolation> RemoveRun(absl::string_view run_id);

  // Events one log line completes: storms pushed out by the open-storm bound (the line's own
  // denial opens or joins a storm and is emitted by Flush).
  std::vector<RunViolation> Feed(absl::string_view line);
  // The same for a denial already parsed.
  std::vector<RunViolation> Add(SeatbeltDenial denial);
  // Storms whose window (from their first denial) has ended, oldest first.
  std::vector<RunViolation> Flush();

  // The run `pid` belongs to, walking parent_of up to kMaxAncestry steps.
  std::optional<std::string> RunOf(int64_t pid);

  uint64_t noise() const { return noise_; }
  uint64_t unattributed() const { return unattributed_; }

  using Key = std::tuple<std::string, std::string, std::string>;  // run, action, target
  struct Storm {
    RunViolation event;
    absl::Time first;
    uint64_t order = 0;
  };

 private:
  void EmitOldest(std::vector<RunViolation>& out);

  ParentOf parent_of_;
  Clock clock_;
  absl::Duration window_;
  std::map<int64_t, std::string> roots_;       // root pid -> run
  std::map<int64_t, std::string> known_pids_;  // pid once attributed -> run
  std::map<Key, Storm> storms_;
  uint64_t next_order_ = 0;
  uint64_t noise_ = 0;
  uint64_t unattributed_ = 0;
};

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_VIOLATIONS_SEATBELT_MONITOR_H_
