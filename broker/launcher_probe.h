// Asks the launcher what it can enforce (LauncherProbeResponse), waiting a bounded time for
// it to come up: the broker's boot line states whether filename-pattern denies are enforced at
// creation time, which only the launcher knows.
#ifndef CCSANDBOX_BROKER_LAUNCHER_PROBE_H_
#define CCSANDBOX_BROKER_LAUNCHER_PROBE_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "proto/launcher.grpc.pb.h"

namespace ccsandbox::broker {

// What the broker knows about the launcher's create guard.
struct CreateGuardState {
  bool known = false;      // the launcher answered
  bool available = false;  // and said it enforces the denies at creation time
  std::string reason;      // its reason, or why it could not be asked
  // Whether it enforces resource limits (cgroups), and how or why not.
  bool limits_available = false;
  std::string limits_reason;
};

// UNAVAILABLE when the launcher does not answer within `wait`.
absl::StatusOr<v1::LauncherProbeResponse> ProbeLauncher(v1::SandboxLauncher::StubInterface& stub,
                                                        std::chrono::milliseconds wait);

CreateGuardState CreateGuardStateFrom(const absl::StatusOr<v1::LauncherProbeResponse>& probe);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_LAUNCHER_PROBE_H_
