#include "policy/plan/push_spec.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "policy/plan/push_wiring.h"

namespace ccsandbox::policy {

absl::Status ValidatePushSpec(const v1::SandboxSpec& spec, v1::SandboxBackend backend) {
  if (!spec.has_push()) return absl::OkStatus();
  if (backend != v1::SANDBOX_BACKEND_NATIVE) {
    return absl::InvalidArgumentError(
        "push: a session on the none backend runs on the host, where nothing routes its pushes "
        "through the gateway; launch it native");
  }
  const std::vector<std::string> repositories(spec.push().repositories().begin(),
                                              spec.push().repositories().end());
  if (absl::Status valid = ValidatePushRepositories(repositories); !valid.ok()) return valid;
  if (spec.push().rules_size() > kMaxPushRules) {
    return absl::InvalidArgumentError(
        absl::StrCat("push.rules: ", spec.push().rules_size(), " is more than ", kMaxPushRules));
  }
  for (int i = 0; i < spec.push().rules_size(); ++i) {
    const std::string& text = spec.push().rules(i);
    if (text.size() > kMaxPushRuleBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("push.rules[", i, "]: longer than ", kMaxPushRuleBytes, " bytes"));
    }
    absl::StatusOr<GuardrailRule> rule = ParseGuardrailRule(text);
    if (!rule.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("push.rules[", i, "]: ", rule.status().message()));
    }
    if (rule->effect != EffectClass::kPushToRemote) {
      return absl::InvalidArgumentError(
          absl::StrCat("push.rules[", i, "]: only push_to_remote rules belong here"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<GuardrailRuleSet> PushRulesOf(const v1::SandboxSpec& spec) {
  absl::StatusOr<GuardrailRuleSet> rules = ParseGuardrailRules(
      std::vector<std::string>(spec.push().rules().begin(), spec.push().rules().end()));
  if (!rules.ok()) return absl::InvalidArgumentError(rules.status().message());
  return rules;
}

}  // namespace ccsandbox::policy
