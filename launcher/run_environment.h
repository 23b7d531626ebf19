// A run's environment as the launcher sets it: the plan's, scrubbed of injection vectors
// (policy/plan/env_scrub.h), then the egress wiring and the push gateway's git configuration when
// the run has them — set after scrubbing, so a caller cannot set those names itself.
#ifndef CCSANDBOX_LAUNCHER_RUN_ENVIRONMENT_H_
#define CCSANDBOX_LAUNCHER_RUN_ENVIRONMENT_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::launcher {

// FAILED_PRECONDITION when a socket the egress wiring points at is not there.
absl::StatusOr<std::map<std::string, std::string>> RunEnvironment(const v1::LaunchPlan& plan);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_RUN_ENVIRONMENT_H_
