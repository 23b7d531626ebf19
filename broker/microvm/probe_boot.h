// Gathers the microVM probe's facts: the configured files, whether KVM really works (opened,
// API version, a VM created), and a probe boot of the configured kernel and image under the
// accelerator the host offers, falling back to tcg. Every hypervisor it starts is killed and
// reaped before it returns, whatever happened.
#ifndef CCSANDBOX_BROKER_MICROVM_PROBE_BOOT_H_
#define CCSANDBOX_BROKER_MICROVM_PROBE_BOOT_H_

#include <string>

#include "absl/time/time.h"
#include "broker/microvm/probe_result.h"

namespace ccsandbox::broker::microvm {

struct MicrovmConfig {
  std::string hypervisor;                           // e.g. /usr/bin/qemu-system-x86_64
  std::string kernel;                               // the guest kernel (bzImage or vmlinux)
  std::string initrd;                               // the probe image: its init prints kProbeMarker
  std::string accel = "auto";                       // auto (kvm when usable, then tcg), kvm or tcg
  absl::Duration boot_timeout = absl::Seconds(10);  // per boot attempt
};

// "" when KVM is usable: /dev/kvm opens read-write, KVM_GET_API_VERSION is 12 and
// KVM_CREATE_VM returns a VM. Otherwise what failed.
std::string KvmProblem();

// One boot of `config`'s kernel and image under `accel`, given up after `config.boot_timeout`.
BootAttempt ProbeBoot(const MicrovmConfig& config, const std::string& accel);

// The facts for EvaluateMicrovm; boots nothing when the configuration is incomplete or a file
// is missing.
MicrovmFacts GatherMicrovmFacts(const MicrovmConfig& config);

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_PROBE_BOOT_H_
