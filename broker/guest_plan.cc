#include "broker/guest_plan.h"

#include "absl/strings/str_cat.h"
#include "base/real_host_view.h"
#include "policy/plan/bwrap_argv.h"

namespace ccsandbox::broker {

absl::StatusOr<microvm::GuestLayout> GuestLayoutOf(const v1::LaunchPlan& sandbox_plan) {
  absl::StatusOr<microvm::GuestLayout> layout =
      microvm::GuestLayoutFromPlan(sandbox_plan, policy::DefaultSystemRoDirs(), RealHostView());
  if (!layout.ok()) {
    return absl::Status(layout.status().code(),
                        absl::StrCat("backend: microvm: ", layout.status().message()));
  }
  return layout;
}

void AddHypervisorMounts(const std::string& state_dir, const std::vector<std::string>& host_files,
                         v1::LaunchPlan& sandbox_plan) {
  v1::PlanMount* mount = sandbox_plan.add_mounts();
  mount->set_host_path(state_dir);
  mount->set_guest_path(state_dir);
  for (const std::string& file : host_files) {
    mount = sandbox_plan.add_mounts();
    mount->set_host_path(file);
    mount->set_guest_path(file);
    mount->set_read_only(true);
  }
}

v1::LaunchPlan HypervisorRun(const std::string& run_id, const std::string& session_id,
                             const std::string& sandbox_id) {
  v1::LaunchPlan run;
  run.set_run_id(run_id);
  run.set_session_id(session_id);
  run.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  run.set_sandbox_id(sandbox_id);
  run.set_workdir("/");
  (*run.mutable_env())["PATH"] = "/usr/bin:/bin";
  return run;
}

}  // namespace ccsandbox::broker
