// The broker's --microvm-* flags, and the microVM probe they configure, run once at boot.
#ifndef CCSANDBOX_BROKER_MICROVM_PROBE_FLAGS_H_
#define CCSANDBOX_BROKER_MICROVM_PROBE_FLAGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "broker/microvm/qemu_runtime.h"
#include "broker/microvm/runtime.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker::microvm {

struct MicrovmProbe {
  v1::ProbeResult result;
  std::string boot_line;  // for the broker's boot line; "" when no --microvm-* flag is given
  // Set when the probe boot worked: the runtime's hypervisor, kernel and the accelerator that
  // booted (the rest of QemuRuntimeConfig comes from RuntimeFromFlags).
  std::optional<QemuRuntimeConfig> runtime;
};

// The probe's result: "not configured" without a probe boot unless --microvm-hypervisor,
// --microvm-kernel and --microvm-initrd are all given. INVALID_ARGUMENT for a bad
// --microvm-accel or --microvm-boot-timeout.
absl::StatusOr<MicrovmProbe> ProbeMicrovmFromFlags();

// The session runtime the probe allows (QemuRuntime, its session image, agent and state root
// from --microvm-image, --microvm-agent, --microvm-state-dir), or null when the probe failed —
// then a microvm Launch is refused with the probe's note. FAILED_PRECONDITION when the probe
// worked but the session image or the agent is missing: a broker configured for microVMs that
// cannot run one refuses to start rather than say so only at Launch.
absl::StatusOr<std::unique_ptr<Runtime>> RuntimeFromFlags(const MicrovmProbe& probe);

// --microvm-state-dir, or its default: $XDG_RUNTIME_DIR/ccsandbox-microvm, else
// /tmp/ccsandbox-microvm-<uid>.
std::string MicrovmStateRoot();

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_PROBE_FLAGS_H_
