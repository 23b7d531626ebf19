#include "broker/microvm/probe_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "broker/microvm/probe_boot.h"
#include "broker/microvm/probe_result.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, microvm_hypervisor, "",
          "the microVM hypervisor (e.g. /usr/bin/qemu-system-x86_64); with --microvm-kernel and "
          "--microvm-initrd the broker probe-boots a guest at start (docs/microvm.md); empty: "
          "microvm is unavailable (not configured)");
ABSL_FLAG(std::string, microvm_kernel, "",
          "the microVM guest kernel (bzImage or vmlinux; scripts/microvm-image.sh)");
ABSL_FLAG(std::string, microvm_initrd, "",
          "the microVM probe image (an initramfs whose init prints the probe marker on the serial "
          "console; scripts/microvm-image.sh)");
ABSL_FLAG(std::string, microvm_accel, "auto",
          "the probe boot's accelerator: auto (kvm when /dev/kvm can create a VM, then tcg if "
          "that boot fails), kvm or tcg");
ABSL_FLAG(absl::Duration, microvm_boot_timeout, absl::Seconds(10),
          "a probe boot that has not printed its marker after this long is killed and counts as "
          "failed (per accelerator tried)");

namespace ccsandbox::broker::microvm {

absl::StatusOr<MicrovmProbe> ProbeMicrovmFromFlags() {
  MicrovmConfig config{.hypervisor = absl::GetFlag(FLAGS_microvm_hypervisor),
                       .kernel = absl::GetFlag(FLAGS_microvm_kernel),
                       .initrd = absl::GetFlag(FLAGS_microvm_initrd),
                       .accel = absl::GetFlag(FLAGS_microvm_accel),
                       .boot_timeout = absl::GetFlag(FLAGS_microvm_boot_timeout)};
  if (config.accel != "auto" && config.accel != "kvm" && config.accel != "tcg") {
    return absl::InvalidArgumentError(
        absl::StrCat("--microvm-accel: '", config.accel, "' is none of auto, kvm, tcg"));
  }
  if (config.boot_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--microvm-boot-timeout: must be positive");
  }
  if (!config.hypervisor.empty() && !config.kernel.empty() && !config.initrd.empty()) {
    spdlog::info("microVM probe: booting {} with {} under {} (at most {} per accelerator)",
                 config.kernel, config.hypervisor, config.accel,
                 absl::FormatDuration(config.boot_timeout));
  }
  MicrovmProbe probe{.result = EvaluateMicrovm(GatherMicrovmFacts(config))};
  if (!config.hypervisor.empty() || !config.kernel.empty() || !config.initrd.empty()) {
    probe.boot_line = MicrovmBootLine(probe.result);
  }
  return probe;
}

}  // namespace ccsandbox::broker::microvm
