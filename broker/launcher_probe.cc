#include "broker/launcher_probe.h"

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "proto/grpc_status.h"

namespace ccsandbox::broker {

absl::StatusOr<v1::LauncherProbeResponse> ProbeLauncher(v1::SandboxLauncher::StubInterface& stub,
                                                        std::chrono::milliseconds wait) {
  grpc::ClientContext context;
  context.set_wait_for_ready(true);
  context.set_deadline(std::chrono::system_clock::now() + wait);
  v1::LauncherProbeResponse response;
  grpc::Status status = stub.Probe(&context, v1::LauncherProbeRequest(), &response);
  if (!status.ok()) {
    return absl::UnavailableError(absl::StrCat("launcher probe failed: ", status.error_message()));
  }
  return response;
}

CreateGuardState CreateGuardStateFrom(const absl::StatusOr<v1::LauncherProbeResponse>& probe) {
  CreateGuardState state;
  if (!probe.ok()) {
    state.reason = std::string(probe.status().message());
    return state;
  }
  state.known = true;
  state.available = probe->create_guard_available();
  state.reason = probe->create_guard_reason();
  state.limits_available = probe->resource_limits_available();
  state.limits_reason = probe->resource_limits_reason();
  return state;
}

}  // namespace ccsandbox::broker
