#include "launcher/macos/seatbelt_run.h"

#include <utility>

namespace ccsandbox::launcher::macos {

absl::StatusOr<std::unique_ptr<SeatbeltRunProcess>> SeatbeltRunProcess::Start(
    const std::string& run_id, const std::string& profile, SeatbeltRun run,
    const SeatbeltLaunchOptions& options, LogStreamMonitor& monitor, EventSink& sink) {
  absl::StatusOr<SeatbeltLaunched> launched =
      LaunchSeatbelt(run_id, profile, std::move(run), options);
  if (!launched.ok()) return launched.status();
  std::unique_ptr<SeatbeltRunProcess> process(new SeatbeltRunProcess(run_id, monitor));
  process->profile_path_ = std::move(launched->profile_path);
  process->process_ = std::move(launched->process);
  // Registered before the command can have done much: sandbox-exec has to load the profile
  // first, and a denial's line is attributed when it is read, not when it was logged.
  monitor.AddRun(run_id, process->process_->pid(),
                 [&sink](const v1::SandboxEvent& event) { sink.Emit(event); });
  process->registered_ = true;
  return process;
}

SeatbeltRunProcess::~SeatbeltRunProcess() {
  process_.reset();
  LeaveMonitor();
}

absl::StatusOr<int> SeatbeltRunProcess::Reap() {
  absl::StatusOr<int> status = process_->Reap();
  LeaveMonitor();
  return status;
}

void SeatbeltRunProcess::LeaveMonitor() {
  if (!registered_) return;
  registered_ = false;
  monitor_.RemoveRun(run_id_);
}

}  // namespace ccsandbox::launcher::macos
