#include "tests/bench/raw_bwrap.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/real_host_view.h"
#include "broker/deny_scan.h"
#include "launcher/sandbox_process.h"
#include "policy/plan/bwrap_argv.h"
#include "policy/plan/deny_sets.h"
#include "policy/plan/env_scrub.h"
#include "policy/plan/launch_plan.h"

extern char** environ;

namespace ccsandbox::bench {
namespace {

std::map<std::string, std::string> HostEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

}  // namespace

absl::StatusOr<SpawnOptions> RawBwrapCommand(const v1::SandboxSpec& spec) {
  const std::map<std::string, std::string> host_env = HostEnvironment();
  auto path = host_env.find("PATH");
  std::optional<std::string> bwrap =
      launcher::FindExecutable("bwrap", path == host_env.end() ? "/usr/bin:/bin" : path->second);
  if (!bwrap.has_value()) {
    return absl::FailedPreconditionError(
        "bwrap not found on PATH; install: apt-get install bubblewrap socat");
  }
  v1::ExecRequest exec;
  exec.add_argv("true");
  policy::PlanInputs inputs;
  inputs.spec = &spec;
  inputs.backend = v1::SANDBOX_BACKEND_NATIVE;
  inputs.exec = &exec;
  inputs.run_id = "bench-raw";
  inputs.base_env = policy::DefaultEnvironment(v1::SANDBOX_BACKEND_NATIVE, host_env);
  absl::StatusOr<v1::LaunchPlan> plan = policy::BuildLaunchPlan(inputs);
  if (!plan.ok()) return plan.status();
  // The deny paths the broker resolves at Launch (BrokerService::ResolveDenyPaths).
  broker::ScanRequest scan_request;
  scan_request.mounts.assign(plan->mounts().begin(), plan->mounts().end());
  scan_request.home_dirs = broker::CurrentHomeDirs();
  absl::StatusOr<policy::DenyScan> scan = broker::ScanForDenyPaths(scan_request);
  if (!scan.ok()) return scan.status();
  policy::DenyPaths deny = policy::ResolveDenyPaths(*scan, RealPathResolver());
  for (std::string& p : deny.read) plan->add_deny_read_paths(std::move(p));
  for (std::string& p : deny.write) plan->add_deny_write_paths(std::move(p));
  policy::BwrapConfig config{*bwrap, policy::DefaultSystemRoDirs()};
  absl::StatusOr<std::vector<std::string>> argv =
      policy::RenderBwrapArgv(*plan, config, RealHostView());
  if (!argv.ok()) return argv.status();

  std::map<std::string, std::string> env(plan->env().begin(), plan->env().end());
  policy::ScrubEnvironment(env);
  SpawnOptions options;
  options.argv = std::move(*argv);
  for (const auto& [name, value] : env) options.envp.push_back(absl::StrCat(name, "=", value));
  return options;
}

}  // namespace ccsandbox::bench
