#include "launcher/shim_plan.h"

#include <vector>

#include "absl/status/status.h"
#include "policy/plan/create_guard_plan.h"
#include "policy/plan/egress_wiring.h"
#include "policy/plan/push_wiring.h"

namespace ccsandbox::launcher {

absl::StatusOr<ShimArgs> ShimArgsFor(const v1::LaunchPlan& plan,
                                     std::optional<int> create_guard_fd) {
  ShimArgs args;
  if (plan.has_egress()) {
    for (const policy::EgressBridge& bridge : policy::EgressBridges()) {
      args.bridges.push_back({bridge.listen_address, bridge.listen_port, bridge.socket});
    }
    if (!plan.egress().push_socket().empty()) {
      args.bridges.push_back({"127.0.0.1", policy::kSandboxPushPort, policy::kSandboxPushSocket});
    }
  }
  if (plan.has_create_guard()) {
    if (!create_guard_fd.has_value()) {
      return absl::InternalError("create_guard: no notify channel for the shim");
    }
    policy::ShimGuardDirs dirs = policy::ShimGuardDirsOf(policy::GuardMountsOf(plan));
    args.create_guard = {.channel_fd = *create_guard_fd,
                         .free_dirs = std::move(dirs.free_create),
                         .writable_dirs = std::move(dirs.writable),
                         .socket_dirs = std::move(dirs.free_sockets)};
  }
  return args;
}

}  // namespace ccsandbox::launcher
