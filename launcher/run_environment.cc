#include "launcher/run_environment.h"

#include <sys/stat.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/plan/egress_wiring.h"
#include "policy/plan/env_scrub.h"
#include "policy/plan/push_wiring.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::launcher {

absl::StatusOr<std::map<std::string, std::string>> RunEnvironment(const v1::LaunchPlan& plan) {
  std::map<std::string, std::string> env(plan.env().begin(), plan.env().end());
  std::vector<std::string> removed = policy::ScrubEnvironment(env);
  if (!removed.empty()) {
    spdlog::info("run {}: scrubbed from the environment: {}", plan.run_id(),
                 absl::StrJoin(removed, ", "));
  }
  if (plan.has_egress()) {
    for (const std::string* path : {&plan.egress().http_socket(), &plan.egress().socks_socket(),
                                    &plan.egress().push_socket()}) {
      if (path->empty() && path == &plan.egress().push_socket()) continue;
      struct stat st;
      if (lstat(path->c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
        return absl::FailedPreconditionError(
            absl::StrCat("egress: '", *path, "' is not the session proxy's socket"));
      }
    }
    // Set after scrubbing: GIT_SSH_COMMAND is scrubbed from callers, ours routes ssh out.
    for (const auto& [name, value] : policy::EgressEnvironment()) env[name] = value;
    if (!plan.egress().push_socket().empty()) {
      // The scrubbed GIT_CONFIG_* are replaced by ours: pushes go through the gateway.
      for (const auto& [name, value] :
           policy::PushEnvironment({plan.egress().push_repositories().begin(),
                                    plan.egress().push_repositories().end()})) {
        env[name] = value;
      }
    }
  }
  return env;
}

}  // namespace ccsandbox::launcher
