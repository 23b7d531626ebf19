#include "broker/microvm/probe_flags.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

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
ABSL_FLAG(std::string, microvm_image, "",
          "the microVM session image (an initramfs whose init runs the guest agent; "
          "scripts/microvm-image.sh's agent-initrd.img); default: agent-initrd.img beside "
          "--microvm-initrd");
ABSL_FLAG(std::string, microvm_agent, "",
          "the static in-guest agent appended to the session image (default: ccsandbox_agent "
          "beside this binary, or microvm/agent/ccsandbox_agent below it as Bazel builds it)");
ABSL_FLAG(std::string, microvm_state_dir, "",
          "where each microVM session's files (boot image, agent socket) go, one directory per "
          "session bound into that session's sandbox only; emptied at boot (default: "
          "$XDG_RUNTIME_DIR/ccsandbox-microvm, else /tmp/ccsandbox-microvm-UID)");
ABSL_FLAG(absl::Duration, microvm_answer_timeout, absl::Seconds(30),
          "a microVM session's guest whose agent leaves the broker's liveness question "
          "unanswered this long (asked every third of it) is hung: powered off, the session in "
          "error with the cause");
ABSL_FLAG(int, microvm_max_guests, 16,
          "microVMs (sessions' and terminals' guests) booting or running at once, at most; one "
          "more Launch or terminal is RESOURCE_EXHAUSTED (0: no limit)");
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
  const MicrovmFacts facts = GatherMicrovmFacts(config);
  MicrovmProbe probe{.result = EvaluateMicrovm(facts)};
  if (probe.result.available() && !facts.boots.empty()) {
    probe.runtime = QemuRuntimeConfig{.hypervisor = config.hypervisor,
                                      .kernel = config.kernel,
                                      .accel = facts.boots.back().accel};
  }
  if (!config.hypervisor.empty() || !config.kernel.empty() || !config.initrd.empty()) {
    probe.boot_line = MicrovmBootLine(probe.result);
  }
  return probe;
}

namespace {

std::string BesideThisBinary(const std::vector<std::string>& names) {
  char self[PATH_MAX];
  if (realpath("/proc/self/exe", self) == nullptr) return "";
  const std::string dir = std::string(self).substr(0, std::string(self).rfind('/'));
  for (const std::string& name : names) {
    const std::string path = absl::StrCat(dir, "/", name);
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return absl::StrCat(dir, "/", names.front());
}

}  // namespace

std::string MicrovmStateRoot() {
  std::string root = absl::GetFlag(FLAGS_microvm_state_dir);
  if (!root.empty()) return root;
  if (const char* xdg = getenv("XDG_RUNTIME_DIR"); xdg != nullptr && xdg[0] == '/') {
    return absl::StrCat(xdg, "/ccsandbox-microvm");
  }
  return absl::StrCat("/tmp/ccsandbox-microvm-", getuid());
}

absl::StatusOr<std::unique_ptr<Runtime>> RuntimeFromFlags(const MicrovmProbe& probe) {
  if (!probe.runtime.has_value()) return nullptr;
  QemuRuntimeConfig config = *probe.runtime;
  config.image = absl::GetFlag(FLAGS_microvm_image);
  if (config.image.empty()) {
    const std::string initrd = absl::GetFlag(FLAGS_microvm_initrd);
    config.image = absl::StrCat(initrd.substr(0, initrd.rfind('/') + 1), "agent-initrd.img");
  }
  config.agent = absl::GetFlag(FLAGS_microvm_agent);
  if (config.agent.empty()) {
    config.agent = BesideThisBinary({"ccsandbox_agent", "microvm/agent/ccsandbox_agent"});
  }
  if (access(config.image.c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--microvm-image: the microVM session image '", config.image,
                     "' cannot be read (scripts/microvm-image.sh builds it)"));
  }
  if (access(config.agent.c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--microvm-agent: the in-guest agent '", config.agent, "' cannot be read"));
  }
  if (config.accel != "tcg") {
    // The hypervisor runs in the session's native sandbox, whose /dev has no /dev/kvm.
    spdlog::warn(
        "microVM sessions run under tcg, not {}: their hypervisor runs inside the "
        "session's sandbox, which has no /dev/kvm",
        config.accel);
    config.accel = "tcg";
  }
  config.answer_timeout = absl::GetFlag(FLAGS_microvm_answer_timeout);
  if (config.answer_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--microvm-answer-timeout: must be positive");
  }
  config.state_root = MicrovmStateRoot();
  config.max_guests = absl::GetFlag(FLAGS_microvm_max_guests);
  if (config.max_guests < 0) {
    return absl::InvalidArgumentError("--microvm-max-guests: must be 0 (no limit) or more");
  }
  spdlog::info("microVM sessions: {} under {} ({}), image {}, agent {}, files under {}",
               config.kernel, config.hypervisor, config.accel, config.image, config.agent,
               config.state_root);
  return std::unique_ptr<Runtime>(std::make_unique<QemuRuntime>(std::move(config)));
}

}  // namespace ccsandbox::broker::microvm
