// A hypervisor process and its process group: SIGKILLed and reaped when this goes, on every
// path, so a boot that timed out or failed, or a guest whose owner is gone, leaves no
// hypervisor (nor a script's children) behind. It also dies with its parent (PR_SET_PDEATHSIG).
#ifndef CCSANDBOX_BROKER_MICROVM_HYPERVISOR_PROCESS_H_
#define CCSANDBOX_BROKER_MICROVM_HYPERVISOR_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace ccsandbox::broker::microvm {

class HypervisorProcess {
 public:
  HypervisorProcess() = default;
  HypervisorProcess(const HypervisorProcess&) = delete;
  HypervisorProcess& operator=(const HypervisorProcess&) = delete;
  ~HypervisorProcess() { KillAndReap(); }

  // Starts argv[0] in its own process group, stdin /dev/null, stdout + stderr into `output`.
  // PR_SET_PDEATHSIG fires when the calling *thread* ends: call it from a thread that outlives
  // the hypervisor (not a pooled RPC thread that may be retired while the guest runs).
  absl::Status Spawn(const std::vector<std::string>& argv, int output);

  // The wait status once the process has exited by `deadline`, else nullopt. Polls.
  std::optional<int> WaitUntil(absl::Time deadline);
  // The wait status if it has exited (reaped now or before), else nullopt. Does not block.
  std::optional<int> Exited() { return WaitUntil(absl::InfinitePast()); }

  // Sends `signal` to the hypervisor alone (SIGTERM: qemu powers the VM off and exits).
  void Signal(int signal);
  // SIGKILLs the process group and reaps the hypervisor; idempotent.
  void KillAndReap();

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  bool killed_ = false;
};

// "exited with status N" / "killed by signal N" / "ended".
std::string WaitStatusText(int status);

// The guest kernel's command line: the serial console, reboot on panic, and the host's TSC
// (from /proc/cpuinfo's "cpu MHz", when known: a guest told it skips the calibration that hung
// about one TCG boot in five); then `extra`, when not empty.
std::string GuestKernelLine(const std::string& extra);

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_HYPERVISOR_PROCESS_H_
