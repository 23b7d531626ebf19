// The seam a microVM runtime plugs into (docs/microvm.md). The broker owns sessions, policy
// and events; a Runtime owns guests: it boots one per session (Start) and runs commands
// (Exec) and a PTY (Terminal) inside it, and stops it. Nothing here may run a workload on
// the host: a Runtime that cannot give a VM fails, it never falls back.
#ifndef CCSANDBOX_BROKER_MICROVM_RUNTIME_H_
#define CCSANDBOX_BROKER_MICROVM_RUNTIME_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "broker/microvm/guest_layout.h"
#include "broker/microvm/hypervisor.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker::microvm {

// One command inside the guest: argv, environment, working directory (a guest path), stdin,
// and a timeout (zero: none).
struct GuestCommand {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string workdir;
  std::string stdin_data;
  absl::Duration timeout = absl::ZeroDuration();
  // Polled while the run goes; a non-empty answer kills the run and its `killed` event says
  // "stopped" with that detail (Kill, Destroy). May be empty.
  std::function<std::string()> stop_requested;
};

// A PTY inside the guest, from Guest::Terminal. Output and the exit arrive on the callbacks
// given there, in order, from one thread of the runtime's; the exit comes last, exactly once.
class GuestTerminal {
 public:
  virtual ~GuestTerminal() = default;
  // Bytes typed into the PTY. FAILED_PRECONDITION once the shell has exited.
  virtual absl::Status Input(const std::string& bytes) = 0;
  // The window size; the shell gets SIGWINCH as on a host PTY.
  virtual absl::Status Resize(uint16_t rows, uint16_t cols) = 0;
  // A signal to the terminal's foreground job (policy::IsTerminalSignal's), as the line
  // discipline sends Ctrl-C.
  virtual absl::Status Signal(int signal) = 0;
  // Hangs up the PTY (SIGHUP to its session) and, after `grace`, kills what is left; the exit
  // callback still runs.
  virtual void Close(absl::Duration grace) = 0;
};

struct TerminalCallbacks {
  std::function<void(const std::string& bytes)> output;
  // The shell's exit code, or -signal; `cause` says why when the guest ended it.
  std::function<void(int exit_code, const std::string& cause)> exited;
};

// One session's VM, from Runtime::Start.
class Guest {
 public:
  virtual ~Guest() = default;

  // Runs `command` in the guest and reports it as SandboxEvents (starting, ready, stdout,
  // stderr, violation, exit or killed), in order; `emit` returning false cancels the run.
  // One run at a time: FAILED_PRECONDITION while another is in progress.
  // Returns when the run has ended; a guest that dies mid-run ends it with a `killed` event
  // and the guest goes to `error`.
  virtual absl::Status Exec(const GuestCommand& command,
                            const std::function<bool(const v1::SandboxEvent&)>& emit) = 0;

  // A shell on a PTY in the guest (argv empty: the guest's login shell).
  virtual absl::StatusOr<std::unique_ptr<GuestTerminal>> Terminal(const GuestCommand& command,
                                                                  uint16_t rows, uint16_t cols,
                                                                  TerminalCallbacks callbacks) = 0;

  // Powers the VM off (after `grace`, kills the hypervisor) and removes every file of it.
  // Idempotent; afterwards State() is destroyed.
  virtual absl::Status Stop(absl::Duration grace) = 0;

  // created (booting), warm (the guest's agent answers), active (a run or terminal is
  // open), suspended, destroyed (after Stop), or error (the guest panicked, hung or its
  // hypervisor died: `cause` says which). Never a state the VM is not in.
  virtual v1::SandboxState State(std::string* cause) const = 0;
};

// The session's proxies (its EgressPlan's http_socket and socks_socket): the guest's only way
// out, over a virtio-serial port the runtime bridges to them (egress_bridge.h).
struct GuestEgress {
  std::string http_socket;
  std::string socks_socket;
};

// What one session's VM is started from.
struct GuestStart {
  v1::SandboxSpec spec;
  // The guest's files (boot image, sockets): an empty directory the caller made and removes
  // (after Stop); empty: a fresh directory under the runtime's state root, removed at Stop.
  std::string state_dir;
  // Where the hypervisor runs; unset: on this host (StartHostHypervisor).
  HypervisorStarter hypervisor;
  // The guest's root: the host directories shared into it and the deny sets it enforces
  // (guest_layout.h: GuestLayoutFromPlan of the session's plan). Unset: no binds, no host files.
  std::optional<GuestLayout> layout;
  // Unset: the guest has no egress port and no way out at all.
  std::optional<GuestEgress> egress;
  // Called once, from a thread of the runtime's, with the cause, when the guest is found hung
  // while no run is open (it is then in error and powered off); a run or terminal open at the
  // time ends with the cause instead. May be empty.
  std::function<void(const std::string& cause)> lost;
};

// Boots guests. One per broker, built from the microVM probe's configuration.
class Runtime {
 public:
  virtual ~Runtime() = default;
  // Boots a VM for `start.spec` (its binds shared per mode, its egress only through the
  // session's proxies) and returns once its agent answers (state warm), or fails with what
  // went wrong: FAILED_PRECONDITION when this host cannot boot one, UNAVAILABLE for a boot that
  // failed, DEADLINE_EXCEEDED for one that did not answer in time. A failed Start leaves
  // nothing running and no file behind.
  virtual absl::StatusOr<std::unique_ptr<Guest>> Start(const GuestStart& start) = 0;
  // The host files the hypervisor reads (its kernel): bound read-only where it runs.
  virtual std::vector<std::string> HostFiles() const { return {}; }
};

// The runtime this broker has (today: UnavailableRuntime, unavailable_runtime.h).
std::unique_ptr<Runtime> MakeRuntime(const v1::ProbeResult& probe);

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_RUNTIME_H_
