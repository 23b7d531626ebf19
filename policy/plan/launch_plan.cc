#include "policy/plan/launch_plan.h"

#include <algorithm>
#include <array>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "policy/plan/spec_validation.h"

namespace ccsandbox::policy {

std::map<std::string, std::string> DefaultEnvironment(
    v1::SandboxBackend backend, const std::map<std::string, std::string>& host_env) {
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"LANG", "C.UTF-8"},
      {"TMPDIR", "/tmp"},
  };
  constexpr std::array<absl::string_view, 6> kCopied = {"LANG", "TZ",      "TERM",
                                                        "USER", "LOGNAME", "HOME"};
  for (absl::string_view name : kCopied) {
    auto it = host_env.find(std::string(name));
    if (it != host_env.end()) env[it->first] = it->second;
  }
  for (const auto& [name, value] : host_env) {
    if (absl::StartsWith(name, "LC_")) env[name] = value;
  }
  // The host home is not mounted in a native sandbox: give it the private /tmp instead.
  if (backend == v1::SANDBOX_BACKEND_NATIVE) env["HOME"] = "/tmp";
  if (backend == v1::SANDBOX_BACKEND_NONE) env.erase("TMPDIR");
  return env;
}

std::vector<v1::PlanMount> PlanMounts(const v1::SandboxSpec& spec, Mode mode) {
  std::vector<v1::PlanMount> mounts;
  for (const v1::SandboxBindMount& bind : spec.bind_mounts()) {
    v1::PlanMount& mount = mounts.emplace_back();
    mount.set_host_path(bind.host_path());
    mount.set_guest_path(bind.guest_path().empty() ? bind.host_path() : bind.guest_path());
    mount.set_read_only(bind.read_only() || ModeIsReadOnly(mode));
  }
  for (const std::string& dir : spec.runner_state_dirs()) {
    v1::PlanMount& mount = mounts.emplace_back();
    mount.set_host_path(dir);
    mount.set_guest_path(dir);
    mount.set_read_only(false);
    mount.set_runner_state(true);
  }
  // bwrap applies mounts in order: a parent mounted after its child would hide the child.
  std::stable_sort(mounts.begin(), mounts.end(),
                   [](const v1::PlanMount& a, const v1::PlanMount& b) {
                     return PathDepth(a.guest_path()) < PathDepth(b.guest_path());
                   });
  return mounts;
}

absl::StatusOr<v1::LaunchPlan> BuildLaunchPlan(const PlanInputs& in) {
  const v1::SandboxSpec& spec = *in.spec;
  const v1::ExecRequest& exec = *in.exec;
  if (exec.argv().empty() || exec.argv(0).empty()) {
    return absl::InvalidArgumentError("argv: the command is empty");
  }
  if (exec.has_guest_workdir()) {
    if (absl::Status s = CheckNormalizedAbsolute("guestWorkdir", exec.guest_workdir()); !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<Mode> mode = ParseMode(spec.mode());
  if (!mode.ok()) return mode.status();

  v1::LaunchPlan plan;
  plan.set_run_id(in.run_id);
  plan.set_session_id(spec.session_id());
  plan.set_backend(in.backend);
  for (v1::PlanMount& mount : PlanMounts(spec, *mode)) {
    if (auto id = in.deny.bind_ids.find(mount.host_path()); id != in.deny.bind_ids.end()) {
      mount.set_dev(id->second.dev);
      mount.set_ino(id->second.ino);
    }
    *plan.add_mounts() = std::move(mount);
  }
  for (const std::string& path : in.deny.read) plan.add_deny_read_paths(path);
  for (const std::string& path : in.deny.write) plan.add_deny_write_paths(path);

  plan.mutable_argv()->CopyFrom(exec.argv());
  for (const auto& [name, value] : in.base_env) (*plan.mutable_env())[name] = value;
  for (const auto& [name, value] : exec.env()) (*plan.mutable_env())[name] = value;

  if (exec.has_guest_workdir()) {
    plan.set_workdir(exec.guest_workdir());
  } else if (spec.has_guest_workdir()) {
    plan.set_workdir(spec.guest_workdir());
  } else if (!spec.bind_mounts().empty()) {
    const v1::SandboxBindMount& first = spec.bind_mounts(0);
    plan.set_workdir(first.guest_path().empty() ? first.host_path() : first.guest_path());
  } else {
    plan.set_workdir("/");
  }
  if (in.backend == v1::SANDBOX_BACKEND_NATIVE) {
    const std::vector<v1::PlanMount> mounts(plan.mounts().begin(), plan.mounts().end());
    if (absl::Status s = CheckWorkdirVisible("guestWorkdir", plan.workdir(), mounts); !s.ok()) {
      return s;
    }
  }
  plan.set_stdin(exec.stdin());
  plan.set_timeout_ms(exec.timeout_ms());
  return plan;
}

}  // namespace ccsandbox::policy
