// The guardrail effect classes a classified shell command line produces (spec: "Pushes go
// through Control Center": the harness bash tool and Claude Code's Bash hook classify each
// command line and ask the rule it falls under). Bridges classifier.h to guardrails.h.
//
//   CommandClassification c = ClassifyCommandLine("git commit -am x && git push origin main");
//   ActionRequest request;
//   request.effects = CommandEffects(c);  // {create_commit}, {push_to_remote, {"main"}}
//   GuardrailDecision d = ResolveAction(request, rules);
//
// Rules with no guardrail class (read-only, mutating, unknown …) produce no effect: the mode's
// command policy decides those.
#ifndef CCSANDBOX_POLICY_COMMAND_EFFECTS_H_
#define CCSANDBOX_POLICY_COMMAND_EFFECTS_H_

#include <optional>
#include <vector>

#include "policy/command/classifier.h"
#include "policy/command/rule.h"
#include "policy/guardrails/guardrails.h"

namespace ccsandbox::policy {

// create_commit, push_to_remote, open_pull_request, publish_review_or_merge,
// write_external_tracker, install_package, publish_package, change_remote_state and
// network_access (network_write and network_access both) have an effect class.
std::optional<EffectClass> EffectClassForCommandRule(CommandRule rule);

// One request per effect class, in the order the line first produces it; push refs merged.
std::vector<EffectRequest> CommandEffects(const CommandClassification& classification);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_COMMAND_EFFECTS_H_
