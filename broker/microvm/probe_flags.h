// The broker's --microvm-* flags, and the microVM probe they configure, run once at boot.
#ifndef CCSANDBOX_BROKER_MICROVM_PROBE_FLAGS_H_
#define CCSANDBOX_BROKER_MICROVM_PROBE_FLAGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker::microvm {

struct MicrovmProbe {
  v1::ProbeResult result;
  std::string boot_line;  // for the broker's boot line; "" when no --microvm-* flag is given
};

// The probe's result: "not configured" without a probe boot unless --microvm-hypervisor,
// --microvm-kernel and --microvm-initrd are all given. INVALID_ARGUMENT for a bad
// --microvm-accel or --microvm-boot-timeout.
absl::StatusOr<MicrovmProbe> ProbeMicrovmFromFlags();

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_PROBE_FLAGS_H_
