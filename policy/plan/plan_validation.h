// The launcher's check of a LaunchPlan before anything runs: the broker is unprivileged,
// so the privileged side re-validates every field it acts on.
#ifndef CCSANDBOX_POLICY_PLAN_PLAN_VALIDATION_H_
#define CCSANDBOX_POLICY_PLAN_PLAN_VALIDATION_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::policy {

struct PlanLimits {
  // Directories no mount may contain or lie inside (the launcher's own socket directory).
  std::vector<std::string> forbidden_dirs;
  // The plan starts a warm sandbox (StartSandbox): it has no command, and no sandbox_id.
  bool sandbox_start = false;
  // A run in a warm sandbox (sandbox_id): the mounts that sandbox started with (its workdir
  // must lie in one). Unset: none.
  const google::protobuf::RepeatedPtrField<v1::PlanMount>* sandbox_mounts = nullptr;
  // A terminal's plan (the Terminal RPC): the only kind that may have the host's network
  // (open_network), and it has no warm sandbox, egress or create guard.
  bool terminal = false;
};

// CheckPlanLimits (input_limits.h: sizes, NUL, UTF-8) first; then INVALID_ARGUMENT naming the
// field for: no run id, unknown backend, empty argv, a mount that is relative, non-normalised,
// "/", guest != host, or overlaps a forbidden dir; a relative workdir, or a native one outside
// every mount of the sandbox, its /tmp and / (workdir_visible.h, the broker's rule). A sandbox
// start must have no argv; a run in a warm sandbox (sandbox_id) must be native and carry none of
// the sandbox's own fields (mounts, deny sets, egress, create guard, forbidden dirs).
absl::Status ValidatePlan(const v1::LaunchPlan& plan, const PlanLimits& limits);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_PLAN_VALIDATION_H_
