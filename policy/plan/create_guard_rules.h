// The rules a session's create guard enforces on every run (CreateGuardPlan): the filename
// patterns, the spec's extra trusted names, protected paths that may not be created, home
// directories' trusted paths and what the bound repositories' git configs name. Pure.
#ifndef CCSANDBOX_POLICY_PLAN_CREATE_GUARD_RULES_H_
#define CCSANDBOX_POLICY_PLAN_CREATE_GUARD_RULES_H_

#include <optional>
#include <string>
#include <vector>

#include "policy/plan/deny_sets.h"
#include "policy/plan/filename_policy.h"
#include "proto/launcher.pb.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

// nullopt when the filename policy needs no create guard.
std::optional<v1::CreateGuardPlan> GuardPlanFor(const v1::SandboxSpec& spec,
                                                const FilenamePolicyDecision& filenames,
                                                const std::vector<std::string>& home_dirs,
                                                const DenyPaths& deny);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_CREATE_GUARD_RULES_H_
