// The microVM runtime this broker has until a real one is built (issue 20): it boots nothing
// and says why — the probe's missing part, or that the session runtime is not built.
#ifndef CCSANDBOX_BROKER_MICROVM_UNAVAILABLE_RUNTIME_H_
#define CCSANDBOX_BROKER_MICROVM_UNAVAILABLE_RUNTIME_H_

#include "broker/microvm/runtime.h"

namespace ccsandbox::broker::microvm {

class UnavailableRuntime final : public Runtime {
 public:
  explicit UnavailableRuntime(v1::ProbeResult probe) : probe_(std::move(probe)) {}

  // FAILED_PRECONDITION with the probe's note when the host cannot boot a VM; UNIMPLEMENTED
  // when it can (the probe boot worked) but no session runtime exists yet.
  absl::StatusOr<std::unique_ptr<Guest>> Start(const GuestStart& start) override;

 private:
  v1::ProbeResult probe_;
};

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_UNAVAILABLE_RUNTIME_H_
