// The bind set of a dispatch into a provisioned conversation, and the confinement roots of the
// harness's file tools for the same run: one rule, so Launch and ConfinePath agree
// (spec/sandbox-and-security.md, "What the sandbox adds and where it stops"). Pure: the caller
// says which directories exist.
//
//   ConversationDirs dirs{.agent_workdir = ".../agents/a1/work", ...};
//   absl::StatusOr<DispatchBinds> binds = PlanDispatchBinds(dirs, kOverlay, "");
//
// Overlay dispatch (Claude Code, ACP) binds at most four paths: the agent's working directory
// read-write, the agent's config directory read-only, the conversation's repos/ read-write if
// present, the space's attachments read-only if present. Harness bash binds only the run's
// working directory. A sibling agent's directory is never in either set.
#ifndef CCSANDBOX_POLICY_PLAN_DISPATCH_BINDS_H_
#define CCSANDBOX_POLICY_PLAN_DISPATCH_BINDS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/policy.pb.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

// One agent's view of its conversation: resolved, normalised absolute paths.
struct ConversationDirs {
  std::string agent_workdir;
  std::string agent_config_dir;
  std::string repos_dir;
  bool repos_present = false;
  std::string attachments_dir;  // "" when the workspace has none
  bool attachments_present = false;
};

struct DispatchBinds {
  std::vector<v1::SandboxBindMount> bind_mounts;  // guest = host
  std::vector<v1::ConfinementRoot> confinement_roots;
  std::string workdir;
};

// `run_workdir`: harness bash only, the run's working directory (resolved), which must lie in
// the agent's working directory or the conversation's repos/ (INVALID_ARGUMENT naming
// "workdir" otherwise); must be empty for overlay dispatch.
absl::StatusOr<DispatchBinds> PlanDispatchBinds(const ConversationDirs& dirs,
                                                v1::WorkspaceDispatch::Kind kind,
                                                const std::string& run_workdir);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_DISPATCH_BINDS_H_
