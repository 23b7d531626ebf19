// A microVM's hypervisor run by the launcher inside the session's native sandbox: a Run whose
// plan is a run of that warm sandbox (sandbox_id) with the hypervisor's argv, held open for the
// guest's life. Threat: qemu parses everything the guest sends (9p, virtio); inside the native
// sandbox a compromised qemu has what a native run has — never host root, never the control
// plane, the same binds, deny sets, seccomp, create guard and limits.
//
// Its stdout and stderr are the console; its exit or `killed` event is the hypervisor's end;
// violations it meets (the create guard refusing a name the guest created through 9p) go to
// `on_violation`. PowerOff is Signal(SIGTERM); Kill is Signal(SIGKILL), then the call is
// cancelled if the launcher has not ended it within 5 s.
#ifndef CCSANDBOX_BROKER_LAUNCHER_HYPERVISOR_H_
#define CCSANDBOX_BROKER_LAUNCHER_HYPERVISOR_H_

#include <functional>

#include "broker/microvm/hypervisor.h"
#include "proto/launcher.grpc.pb.h"

namespace ccsandbox::broker {

// `plan`: a run of the session's warm sandbox (its run_id names the hypervisor's run; argv is
// filled in by the starter). `launcher` outlives every hypervisor started. `on_end` gets how the
// hypervisor ended and its console's tail, once, when it ended by itself (not by Kill).
microvm::HypervisorStarter LauncherHypervisorStarter(
    v1::SandboxLauncher::StubInterface& launcher, v1::LaunchPlan plan,
    std::function<void(const v1::SandboxEvent&)> on_violation,
    std::function<void(const std::string& how, const std::string& console)> on_end);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_LAUNCHER_HYPERVISOR_H_
