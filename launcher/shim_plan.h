// What the launcher tells a run's shim, from the run's plan: the egress bridges when the plan
// has egress (policy/plan/egress_wiring.h), the create guard's channel and dirs when it has a
// create guard (policy/plan/create_guard_plan.h). launcher/shim/shim_args.h renders the result
// into the bwrap argv (BwrapConfig::shim_args).
//
//   absl::StatusOr<ShimArgs> shim = ShimArgsFor(plan, guard_fd);
//   bwrap_config.shim_args = RenderShimArgs(*shim);
#ifndef CCSANDBOX_LAUNCHER_SHIM_PLAN_H_
#define CCSANDBOX_LAUNCHER_SHIM_PLAN_H_

#include <optional>

#include "absl/status/statusor.h"
#include "launcher/shim/shim_args.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::launcher {

// `create_guard_fd`: the fd number of the shim's end of the create guard's notify channel, as
// the shim will see it. A plan with a create guard and no channel is refused: the command
// never runs without the guard it was promised.
absl::StatusOr<ShimArgs> ShimArgsFor(const v1::LaunchPlan& plan,
                                     std::optional<int> create_guard_fd);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SHIM_PLAN_H_
