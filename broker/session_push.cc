#include "broker/session_push.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "broker/unix_listener.h"
#include "policy/plan/push_spec.h"
#include "policy/plan/push_wiring.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {
absl::StatusOr<std::unique_ptr<gateway::PushGateway>> StartSessionPush(
    const v1::SandboxSpec& spec, const std::string& session_dir,
    gateway::CredentialBroker* credentials,
    std::function<void(const v1::SandboxViolation&)> on_violation, v1::EgressPlan& plan,
    std::function<std::string(const std::string&)> upstream_address) {
  if (absl::Status valid = policy::ValidatePushSpec(spec, v1::SANDBOX_BACKEND_NATIVE);
      !valid.ok()) {
    return valid;
  }
  if (credentials == nullptr) {
    return absl::FailedPreconditionError(
        "push: this broker has no credential broker for pushes (--push-credentials); a push "
        "gateway without one could not push, and nothing would stop the sandbox's own");
  }
  absl::StatusOr<policy::GuardrailRuleSet> rules = policy::PushRulesOf(spec);
  if (!rules.ok()) return rules.status();
  gateway::PushGatewayOptions options;
  options.session_id = spec.session_id();
  options.rules = *std::move(rules);
  options.credentials = credentials;
  options.upstream_address = std::move(upstream_address);
  for (const std::string& url : spec.push().repositories()) {
    absl::StatusOr<std::string> path = policy::GatewayPathFor(url);
    if (!path.ok()) return path.status();
    options.repositories.push_back({*path, url});
    plan.add_push_repositories(url);
  }
  const std::string session = spec.session_id();
  options.on_decision = [session, on_violation](const std::string& line) {
    spdlog::info("session {}: push gateway: {}", session, line);
    if (absl::StartsWith(line, "push to ") && !absl::StrContains(line, ": refused (")) return;
    if (absl::StartsWith(line, "probe of ")) return;
    v1::SandboxViolation violation;
    violation.set_action("git-push");
    violation.set_target(line.substr(0, line.find(':')));
    violation.set_raw(line);
    on_violation(violation);
  };
  plan.set_push_socket(session_dir + "/push.sock");
  absl::StatusOr<UniqueFd> listener = UnixListener(plan.push_socket());
  if (!listener.ok()) return listener.status();
  return gateway::PushGateway::Start(*std::move(listener), std::move(options));
}

}  // namespace ccsandbox::broker
