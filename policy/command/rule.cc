#include "policy/command/rule.h"

#include <array>

namespace ccsandbox::policy {
namespace {

struct RuleText {
  absl::string_view id;
  absl::string_view name;
};

constexpr std::array<RuleText, kCommandRuleCount> kRules = {{
    {"unparseable", "unparseable command line"},
    {"system_destruction", "system or disk destruction"},
    {"container_escape", "container or namespace escape"},
    {"privilege_escalation", "privilege escalation"},
    {"push_to_remote", "push to remote repository"},
    {"publish_package", "publish a package"},
    {"open_pull_request", "open a pull request"},
    {"publish_review_or_merge", "publish a review or perform a merge"},
    {"write_external_tracker", "write to an external tracker"},
    {"change_remote_state", "change remote state"},
    {"install_package", "install a package"},
    {"dynamic_code", "run code the policy cannot see"},
    {"create_commit", "create a commit"},
    {"network_write", "network access that sends data"},
    {"mutating", "change local state"},
    {"opaque_program", "run a script or inline program"},
    {"unknown_program", "run a program the policy does not know"},
    {"network_access", "network access"},
    {"read_only", "read-only command"},
}};

}  // namespace

absl::string_view CommandRuleName(CommandRule rule) { return kRules[static_cast<int>(rule)].name; }

absl::string_view CommandRuleId(CommandRule rule) { return kRules[static_cast<int>(rule)].id; }

std::optional<CommandRule> CommandRuleFromId(absl::string_view id) {
  for (int i = 0; i < kCommandRuleCount; ++i) {
    if (kRules[i].id == id) return static_cast<CommandRule>(i);
  }
  return std::nullopt;
}

bool CommandRuleFullyAnalysed(CommandRule rule) {
  return rule != CommandRule::kDynamicCode && rule != CommandRule::kOpaqueProgram &&
         rule != CommandRule::kUnparseable;
}

}  // namespace ccsandbox::policy
