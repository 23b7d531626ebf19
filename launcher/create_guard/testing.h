// Test and benchmark harness for create-time enforcement: runs a command under
// real bwrap (with the seccomp baseline) and the real sandbox_shim as uid
// 65534, a host dir bound writable at /work, and a CreateSupervisor in the
// calling process. Needs root.
//
//   GuardedSandbox sandbox(bin_dir, work_dir, baseline);
//   GuardedRun run = sandbox.Run({"/opt/cg/create_guard_test_helper", "open /work/x"});
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_TESTING_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_TESTING_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "launcher/create_guard/supervisor.h"
#include "launcher/sandbox_process.h"

namespace ccsandbox::launcher {

inline constexpr uid_t kSandboxUid = 65534;
// Where the bin dir appears inside: sandbox_shim and create_guard_test_helper
// live here.
inline constexpr char kSandboxBinDir[] = "/opt/cg";
// Their runfiles paths, for MakeBinDir.
inline const std::vector<std::string> kGuardBinaries = {
    "launcher/sandbox_shim", "launcher/create_guard/create_guard_test_helper"};
inline constexpr char kSandboxHelper[] = "/opt/cg/create_guard_test_helper";

struct GuardedRunOptions {
  bool guard = true;  // false: the same sandbox without --create-guard (for comparisons)
  // The shim's create-guard arguments; "{fd}" becomes the channel's fd number.
  std::vector<std::string> shim_args = {"--create-guard={fd}", "--free-create=/tmp",
                                        "--writable=/work"};
  // Called once the sandbox runs, before its output is read.
  std::function<void(SandboxProcess&, CreateSupervisor*)> during;
  // Instead of a supervisor: the caller gets the launcher's end of the channel.
  std::function<void(SandboxProcess&, UniqueFd)> without_supervisor;
};

struct GuardedRun {
  std::vector<std::string> lines;  // stdout, one per line
  std::string stderr_text;
  int wait_status = -1;
  std::vector<CreateViolation> violations;
  std::vector<absl::Status> failures;
  CreateSupervisor::Stats stats;
  bool never_started = false;  // the shim closed the channel without handing over its fd
};

class GuardedSandbox {
 public:
  // `bin_dir` must be readable by uid 65534; `work` is bound at /work.
  GuardedSandbox(std::string bin_dir, std::string work, std::string baseline_program)
      : bin_dir_(std::move(bin_dir)),
        work_(std::move(work)),
        baseline_(std::move(baseline_program)) {}

  GuardedRun Run(const std::vector<std::string>& command, GuardedRunOptions options = {}) const;

 private:
  std::vector<std::string> BwrapArgv(int baseline_fd, int channel_fd,
                                     const GuardedRunOptions& options,
                                     const std::vector<std::string>& command) const;

  std::string bin_dir_, work_, baseline_;
};

// Copies the files at `from`/<each of `paths`> into a new world-readable dir under /tmp, each
// under its base name, and returns the dir. NOT_FOUND naming the file when one is missing.
absl::StatusOr<std::string> MakeBinDir(const std::string& from,
                                       const std::vector<std::string>& paths);

// True under CI (the environment variable CI set, and not to "false" or "0"; .bazelrc passes
// it to tests): a host without create-time enforcement is then a failure, not a skip.
bool RunningUnderCi();

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_TESTING_H_
