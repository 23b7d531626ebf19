// One macOS run as the launcher's run supervisor (run_supervisor.h) drives it: the sandbox-exec
// process LaunchSeatbelt started, registered with the LogStreamMonitor under the run's id for as
// long as it lives, so its Seatbelt denials become violation events in the run's own EventSink.
//
//   auto run = SeatbeltRunProcess::Start(run_id, profile, seatbelt_run, options, monitor, sink);
//   Supervise(**run, control, supervise_options, sink);   // stdout, stderr, violations, exit
//
// Reap removes the run from the monitor (its open storms are emitted first), and the supervisor
// emits the exit event only after Reap: no violation follows a run's end. Known residual: a
// denial that `log stream` prints after the run was reaped finds no run and is dropped (counted
// as unattributed); the stream gives no way to know it has caught up.
#ifndef CCSANDBOX_LAUNCHER_MACOS_SEATBELT_RUN_H_
#define CCSANDBOX_LAUNCHER_MACOS_SEATBELT_RUN_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "launcher/macos/log_stream_monitor.h"
#include "launcher/macos/seatbelt_launch.h"
#include "launcher/run_supervisor.h"
#include "launcher/supervised_process.h"

namespace ccsandbox::launcher::macos {

class SeatbeltRunProcess : public SupervisedProcess {
 public:
  // `monitor` and `sink` outlive the process.
  static absl::StatusOr<std::unique_ptr<SeatbeltRunProcess>> Start(
      const std::string& run_id, const std::string& profile, SeatbeltRun run,
      const SeatbeltLaunchOptions& options, LogStreamMonitor& monitor, EventSink& sink);
  ~SeatbeltRunProcess() override;  // kills and reaps the process, then leaves the monitor
  SeatbeltRunProcess(const SeatbeltRunProcess&) = delete;
  SeatbeltRunProcess& operator=(const SeatbeltRunProcess&) = delete;

  const std::string& profile_path() const { return profile_path_; }  // the handle's detail
  pid_t pid() const { return process_->pid(); }

  int stdin_fd() const override { return process_->stdin_fd(); }
  int stdout_fd() const override { return process_->stdout_fd(); }
  int stderr_fd() const override { return process_->stderr_fd(); }
  void CloseStdin() override { process_->CloseStdin(); }
  void CloseStdout() override { process_->CloseStdout(); }
  void CloseStderr() override { process_->CloseStderr(); }
  int exit_fd() const override { return process_->exit_fd(); }
  void SignalGroup(int sig) override { process_->SignalGroup(sig); }
  // The command's wait status; the run has left the monitor when this returns.
  absl::StatusOr<int> Reap() override;

 private:
  SeatbeltRunProcess(std::string run_id, LogStreamMonitor& monitor)
      : run_id_(std::move(run_id)), monitor_(monitor) {}
  void LeaveMonitor();

  const std::string run_id_;
  LogStreamMonitor& monitor_;
  bool registered_ = false;
  std::string profile_path_;
  std::unique_ptr<SpawnedProcess> process_;
};

}  // namespace ccsandbox::launcher::macos

#endif  // CCSANDBOX_LAUNCHER_MACOS_SEATBELT_RUN_H_
