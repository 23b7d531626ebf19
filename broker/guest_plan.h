// What a native sandbox needs to run a microVM (a microvm session's, a microvm terminal's): the
// guest's root from the sandbox's own plan, the mounts qemu needs in it, and the hypervisor's
// run in it. One place for both callers (broker_service.cc, broker_service_microvm.cc).
#ifndef CCSANDBOX_BROKER_GUEST_PLAN_H_
#define CCSANDBOX_BROKER_GUEST_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "broker/microvm/guest_layout.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::broker {

// The guest's root: the sandbox's view (system dirs, binds, deny sets) as qemu sees it from
// inside, errors prefixed "backend: microvm: ".
absl::StatusOr<microvm::GuestLayout> GuestLayoutOf(const v1::LaunchPlan& sandbox_plan);

// The guest's directory (read-write: qemu's sockets) and the hypervisor's host files
// (read-only), each at its own path: what qemu is given is what it finds. Call after
// GuestLayoutOf: these are never shared into the guest.
void AddHypervisorMounts(const std::string& state_dir, const std::vector<std::string>& host_files,
                         v1::LaunchPlan& sandbox_plan);

// The hypervisor as a run of warm sandbox `sandbox_id`: only its own fields (argv is the
// starter's).
v1::LaunchPlan HypervisorRun(const std::string& run_id, const std::string& session_id,
                             const std::string& sandbox_id);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_GUEST_PLAN_H_
