#include "broker/cli_plan.h"

#include <chrono>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broker/cli_exit.h"
#include "broker/cli_json.h"
#include "broker/cli_session.h"

namespace ccsandbox::broker {
namespace {

void Section(std::string& out, absl::string_view heading,
             const google::protobuf::RepeatedPtrField<std::string>& items) {
  absl::StrAppend(&out, heading, ":\n");
  if (items.empty()) absl::StrAppend(&out, "  (none)\n");
  for (const std::string& item : items) absl::StrAppend(&out, "  ", item, "\n");
}

}  // namespace

std::string FormatRenderPlan(const v1::RenderPlanResponse& plan) {
  std::string out = absl::StrCat(
      "platform: ", plan.platform(), "\n", "backend: ", BackendText(plan.backend()), " (",
      plan.backend_note(), ")\n", "filename policy: ", plan.filename_policy(), "\n");
  if (plan.platform() == "macos") {
    // The profile verbatim, so it can be saved as a .sb file and read by sandbox-exec -f.
    absl::StrAppend(&out, "network: ", plan.network_enabled() ? "enabled" : "disabled", "\n");
    Section(out, "egress allowlist (as parsed)", plan.egress_allow_entries());
    absl::StrAppend(&out, "seatbelt profile (sandbox-exec -p):\n",
                    plan.seatbelt_profile().empty() ? "  (none)\n" : plan.seatbelt_profile());
    Section(out, "notes", plan.notes());
    return out;
  }
  Section(out, "bwrap argv (what the launcher would render from this plan on this host)",
          plan.bwrap_argv());
  Section(out, "deny read (hidden; literal and resolved spellings)", plan.deny_read_paths());
  Section(out, "deny write (read-only; literal and resolved spellings)", plan.deny_write_paths());
  Section(out, "creation denied (no name created at or beneath)", plan.creation_denied_paths());
  absl::StrAppend(&out, "create guard: ", plan.create_guard() ? "on" : "off", "\n");
  Section(out, "create guard patterns", plan.create_guard_patterns());
  Section(out, "create guard trusted names (spec.denyWriteNames)",
          plan.create_guard_trusted_names());
  Section(out, "create guard protected paths", plan.create_guard_protected_paths());
  absl::StrAppend(&out, "network: ", plan.network_enabled() ? "enabled" : "disabled", "\n");
  Section(out, "egress allowlist (as parsed)", plan.egress_allow_entries());
  Section(out, "notes", plan.notes());
  return out;
}

std::string RenderPlanJson(const v1::RenderPlanResponse& plan) { return JsonLine(plan); }

int RunPlan(v1::SandboxBroker::Stub& stub, const LaunchFlags& flags, const std::string& platform,
            const std::vector<std::string>& argv, bool json) {
  absl::StatusOr<std::string> workdir = ResolveWorkdir(flags.workdir);
  if (!workdir.ok()) return Fail(std::string(workdir.status().message()));
  absl::StatusOr<v1::LaunchRequest> launch = BuildLaunchRequest(flags, *workdir);
  if (!launch.ok()) return Fail(std::string(launch.status().message()));
  v1::RenderPlanRequest request;
  *request.mutable_launch() = *std::move(launch);
  request.set_platform(platform);
  request.mutable_argv()->Add(argv.begin(), argv.end());
  v1::RenderPlanResponse plan;
  grpc::ClientContext context;
  // The deny scan walks every bound tree: as long as sandboxctl gives a Launch.
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::Status status = stub.RenderPlan(&context, request, &plan);
  if (!status.ok()) return Fail(absl::StrCat("plan: ", status.error_message()));
  std::cout << (json ? RenderPlanJson(plan) + "\n" : FormatRenderPlan(plan)) << std::flush;
  return 0;
}

}  // namespace ccsandbox::broker
