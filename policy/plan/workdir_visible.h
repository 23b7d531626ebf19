// Where a native run may start: a directory the sandbox has. The one rule for the broker (the
// spec's and an Exec's guestWorkdir, at Launch and Exec) and the launcher (the plan's workdir,
// again, before anything runs). Pure.
//
//   CheckWorkdirVisible("guestWorkdir", "/etc", mounts);  // INVALID_ARGUMENT unless bound
#ifndef CCSANDBOX_POLICY_PLAN_WORKDIR_VISIBLE_H_
#define CCSANDBOX_POLICY_PLAN_WORKDIR_VISIBLE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::policy {

// OK when `workdir` (absolute, normalised) is at or below a mount's guest path, the private
// /tmp, or `/`. Otherwise INVALID_ARGUMENT naming `field`: the command would start in a
// directory the sandbox does not have (bwrap's --chdir fails, or worse, lands on the host's
// name for something else).
absl::Status CheckWorkdirVisible(absl::string_view field, const std::string& workdir,
                                 const std::vector<v1::PlanMount>& mounts);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_WORKDIR_VISIBLE_H_
