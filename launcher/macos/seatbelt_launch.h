// The macOS spawn, kept tiny: writes the run's profile to a kept file (its path is the handle's
// `seatbeltProfile` detail, for diagnostics) and spawns `sandbox-exec -f FILE -- ARGV` as the
// run's root process (a SpawnedProcess: its own session and process group, piped stdio; the run
// supervisor drives it like any other run). Only a macOS launcher selects it: the probe says
// the native backend is unavailable wherever /usr/bin/sandbox-exec is missing.
//
//   absl::StatusOr<SeatbeltLaunched> run = LaunchSeatbelt(run_id, profile, seatbelt_run,
//                                                         {.profile_dir = dir});
//   monitor.AddRun(run_id, run->process->pid());  // the denials' root pid (log_stream_monitor.h)
//
// sandbox-exec applies the profile and then execs the command, so the root pid is the command's.
// NOT RUN ON A MAC. On Linux this is tested with a stand-in `sandbox-exec`
// (testdata/fake_sandbox_exec.sh) that checks our plumbing, not Seatbelt.
#ifndef CCSANDBOX_LAUNCHER_MACOS_SEATBELT_LAUNCH_H_
#define CCSANDBOX_LAUNCHER_MACOS_SEATBELT_LAUNCH_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "launcher/macos/seatbelt_exec.h"
#include "launcher/macos/spawned_process.h"

namespace ccsandbox::launcher::macos {

struct SeatbeltLaunchOptions {
  // A private directory of the launcher's (0700): the kept profiles, one <run_id>.sb each.
  std::string profile_dir;
  std::string sandbox_exec = kSandboxExecPath;  // tests: a stand-in
};

struct SeatbeltLaunched {
  std::unique_ptr<SpawnedProcess> process;  // the run's root: sandbox-exec, then the command
  std::string profile_path;
};

// Writes `profile` to <profile_dir>/<run_id>.sb (0600, never over an existing file or through a
// symlink: ALREADY_EXISTS) and spawns the run. `run.profile_path` is set here. INVALID_ARGUMENT
// for a run id that is not a plain name, or from RenderSeatbeltExec; the spawn's own errors
// as SpawnedProcess::Spawn gives them. The profile stays on disk whatever happens.
absl::StatusOr<SeatbeltLaunched> LaunchSeatbelt(const std::string& run_id,
                                                const std::string& profile, SeatbeltRun run,
                                                const SeatbeltLaunchOptions& options);

}  // namespace ccsandbox::launcher::macos

#endif  // CCSANDBOX_LAUNCHER_MACOS_SEATBELT_LAUNCH_H_
