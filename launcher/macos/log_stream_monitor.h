// macOS's denial telemetry, wired: spawns `log stream --style ndjson --predicate 'sender ==
// "Sandbox"'`, feeds each line to a SeatbeltMonitor (policy/violations: noise dropped, denials
// attributed to runs by pid tree, retry storms folded) and delivers every run's violations to
// that run's own sink as SandboxEvent{violation}, the fold's size in SandboxViolation.count.
//
//   auto monitor = LogStreamMonitor::Start({});              // once per launcher
//   (*monitor)->AddRun(run_id, sandbox_exec_pid, sink);      // at launch (seatbelt_launch.h)
//   ...                                                      // denials reach `sink`
//   (*monitor)->RemoveRun(run_id);                           // at the run's end
//
// The stream is one process for every run. When it ends (log killed, a macOS update), that is
// never silent: it is reaped, its end logged and counted (stream_ends()) and reported to
// `on_stream_end`, and it is started again after `restart_delay`; denials logged meanwhile are
// lost, which the report says. Threads: one reader thread; sinks are called on it, under the
// monitor's lock (keep them short: queue the event), never after RemoveRun returns.
// NOT RUN ON A MAC: tested on Linux with stand-in `log` commands printing the corpus lines (the
// command is an option).
#ifndef CCSANDBOX_LAUNCHER_MACOS_LOG_STREAM_MONITOR_H_
#define CCSANDBOX_LAUNCHER_MACOS_LOG_STREAM_MONITOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"
#include "launcher/macos/spawned_process.h"
#include "policy/violations/seatbelt_monitor.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::launcher::macos {

using RunSink = std::function<void(const v1::SandboxEvent& event)>;

struct LogStreamOptions {
  // argv; argv[0] absolute.
  std::vector<std::string> command = {"/usr/bin/log", "stream",      "--style",
                                      "ndjson",       "--predicate", "sender == \"Sandbox\""};
  absl::Duration window = absl::Seconds(1);  // a storm: same run + action + target within it
  absl::Duration restart_delay = absl::Seconds(1);
  // The parent of a live pid (ParentOf in production); injected by tests of the pid tree.
  policy::SeatbeltMonitor::ParentOf parent_of;
  // Told each time the stream ends, with why (its wait status); may be empty.
  std::function<void(const std::string& why)> on_stream_end;
};

class LogStreamMonitor {
 public:
  // Starts the stream and its reader. FAILED_PRECONDITION when the stream cannot start.
  static absl::StatusOr<std::unique_ptr<LogStreamMonitor>> Start(LogStreamOptions options);
  ~LogStreamMonitor();  // stops the reader, kills and reaps the stream
  LogStreamMonitor(const LogStreamMonitor&) = delete;
  LogStreamMonitor& operator=(const LogStreamMonitor&) = delete;

  // Denials of `root_pid` and its descendants go to `sink` from now on.
  void AddRun(const std::string& run_id, int64_t root_pid, RunSink sink);
  // Delivers the run's open storms to its sink and forgets it: nothing reaches that sink after
  // this returns. Call it after the run's last process has ended (and its lines were read).
  void RemoveRun(const std::string& run_id);

  uint64_t lines() const;         // lines read from the stream (every start)
  uint64_t stream_ends() const;   // times the stream ended and was restarted
  uint64_t noise() const;         // dropped as known noise
  uint64_t unattributed() const;  // denials of no registered run

 private:
  explicit LogStreamMonitor(LogStreamOptions options);
  void Reader();
  // Reads what the stream has; false at its end.
  bool ReadStream(SpawnedProcess& stream, std::string& partial, bool& skipping);
  void HandleLine(const std::string& line);
  void Deliver(const std::vector<policy::RunViolation>& events) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::unique_ptr<SpawnedProcess>> Spawn() const;
  void StreamEnded(SpawnedProcess& stream);
  bool WaitForStop(absl::Duration timeout);  // true when asked to stop

  const LogStreamOptions options_;
  UniqueFd wake_read_, wake_write_;  // written to by the destructor

  mutable absl::Mutex mu_;
  policy::SeatbeltMonitor monitor_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, RunSink> sinks_ ABSL_GUARDED_BY(mu_);
  uint64_t lines_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t stream_ends_ ABSL_GUARDED_BY(mu_) = 0;

  std::unique_ptr<SpawnedProcess> first_stream_;  // Start's, handed to the reader
  std::thread reader_;
};

}  // namespace ccsandbox::launcher::macos

#endif  // CCSANDBOX_LAUNCHER_MACOS_LOG_STREAM_MONITOR_H_
