// Where a guest's hypervisor runs, behind one interface: on this host (HostHypervisor: the
// probe's way, and the runtime's own tests) or inside the session's native sandbox through the
// launcher (broker/launcher_hypervisor.h), so that qemu itself — its 9p server, its device
// emulation — is confined like a native run, and never runs as host root.
#ifndef CCSANDBOX_BROKER_MICROVM_HYPERVISOR_H_
#define CCSANDBOX_BROKER_MICROVM_HYPERVISOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ccsandbox::broker::microvm {

class Hypervisor {
 public:
  virtual ~Hypervisor() = default;
  // The guest's outermost host process (reported as its runs' pid).
  virtual int pid() const = 0;
  // Why it ended ("exited with status 1", "killed by signal 9", ...) once it has, else nullopt
  // after waiting until `deadline`.
  virtual std::optional<std::string> WaitUntil(absl::Time deadline) = 0;
  std::optional<std::string> Ended() { return WaitUntil(absl::InfinitePast()); }
  // SIGTERM to the hypervisor: qemu powers the VM off and exits.
  virtual void PowerOff() = 0;
  // Kills it and whatever it started, and returns once they are gone; idempotent.
  virtual void Kill() = 0;
  // How many bytes its console (the guest's serial output and the hypervisor's own messages)
  // has produced so far, and the last 64 KiB of it.
  virtual uint64_t ConsoleSize() const = 0;
  virtual std::string ConsoleTail() const = 0;
};

// Starts `argv` (argv[0]: the hypervisor) for the guest whose files are in `state_dir`.
using HypervisorStarter = std::function<absl::StatusOr<std::unique_ptr<Hypervisor>>(
    const std::vector<std::string>& argv, const std::string& state_dir)>;

// On this host, in its own process group, dying with the calling thread (PR_SET_PDEATHSIG: call
// it from a thread that outlives the guest); its console in `state_dir`/console.log.
absl::StatusOr<std::unique_ptr<Hypervisor>> StartHostHypervisor(
    const std::vector<std::string>& argv, const std::string& state_dir);

// How much of a console ConsoleTail keeps.
inline constexpr size_t kConsoleTail = 64 * 1024;

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_HYPERVISOR_H_
