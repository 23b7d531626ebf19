// SandboxSpec + ExecRequest -> LaunchPlan: the structured data the launcher validates and runs.
#ifndef CCSANDBOX_POLICY_PLAN_LAUNCH_PLAN_H_
#define CCSANDBOX_POLICY_PLAN_LAUNCH_PLAN_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "policy/plan/deny_sets.h"
#include "policy/plan/spec_validation.h"
#include "policy/plan/workdir_visible.h"
#include "proto/launcher.pb.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

struct PlanInputs {
  const v1::SandboxSpec* spec = nullptr;  // already validated by ValidateSpec
  v1::SandboxBackend backend = v1::SANDBOX_BACKEND_NONE;
  const v1::ExecRequest* exec = nullptr;
  std::string run_id;
  // Base environment before the request's own variables (see DefaultEnvironment).
  std::map<std::string, std::string> base_env;
  // The session's deny sets (resolved at Launch, see ResolveDenyPaths).
  DenyPaths deny;
};

// The spec's mounts: bindMounts (read-only in review/plan/orchestrate), then
// runnerStateDirs (writable in every mode), parents before children.
std::vector<v1::PlanMount> PlanMounts(const v1::SandboxSpec& spec, Mode mode);

// Environment every command starts from: a fixed PATH, LANG, TMPDIR and HOME, plus the
// few identity and locale variables copied from `host_env`. Nothing else of the caller's
// environment leaks in; the request adds its own variables explicitly.
std::map<std::string, std::string> DefaultEnvironment(
    v1::SandboxBackend backend, const std::map<std::string, std::string>& host_env);

// Mounts: bindMounts (read-only in review/plan/orchestrate), then runnerStateDirs
// (writable in every mode), parents before children. Working directory: the request's
// override, else spec.guestWorkdir, else the first bind's guest path, else "/"; a native
// run's must be visible inside (CheckWorkdirVisible).
absl::StatusOr<v1::LaunchPlan> BuildLaunchPlan(const PlanInputs& inputs);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_LAUNCH_PLAN_H_
