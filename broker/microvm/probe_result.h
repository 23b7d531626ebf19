// The microVM probe's decision (facts -> ProbeResult) and its line on the broker's boot line.
// Pure: gathering the facts (files, /dev/kvm, a probe boot) is probe_boot.{h,cc}.
#ifndef CCSANDBOX_BROKER_MICROVM_PROBE_RESULT_H_
#define CCSANDBOX_BROKER_MICROVM_PROBE_RESULT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker::microvm {

// What the probe guest's init prints on its serial console once it runs (the contract of the
// probe image, scripts/microvm-image.sh).
inline constexpr absl::string_view kProbeMarker = "CCSANDBOX_MICROVM_PROBE_OK";

// One probe boot under one accelerator ("kvm" or "tcg").
struct BootAttempt {
  std::string accel;
  bool reached_marker = false;
  absl::Duration took;  // to the marker, or until it was given up
  // Why it did not reach the marker: "exited with status 1", "no marker within 10s", ...
  std::string failure;
  std::string output_line;  // the first error line of its output, else its last line
};

// Everything the decision needs; an empty *_problem means that part is fine.
struct MicrovmFacts {
  std::string hypervisor;  // the flags as given ("" = not set)
  std::string kernel;
  std::string initrd;
  std::string hypervisor_problem;  // e.g. "not found", "not executable"
  std::string kernel_problem;
  std::string initrd_problem;
  std::string kvm_problem;         // "" = /dev/kvm opened, API version 12, KVM_CREATE_VM worked
  std::vector<BootAttempt> boots;  // in the order tried; empty when a part above is missing
  absl::Time taken;                // when the probe ran
};

// Available only when the last boot reached the marker. Otherwise the note names the first
// missing part: the flags, the hypervisor, the kernel, the image, KVM (with accel=kvm), a boot.
v1::ProbeResult EvaluateMicrovm(const MicrovmFacts& facts);

// "microVM available (<note>)" or "microVM unavailable (<note>)", for the boot line.
std::string MicrovmBootLine(const v1::ProbeResult& microvm);

// The line of a boot's output worth quoting: the first that says error, panic, fatal or failed,
// else the last non-empty one; control characters dropped, cut to 160 characters.
std::string QuotableLine(absl::string_view output);

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_PROBE_RESULT_H_
