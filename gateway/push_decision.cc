#include "gateway/push_decision.h"

#include "absl/strings/str_cat.h"

namespace ccsandbox::gateway {

PushDecision DecidePush(const std::vector<RefUpdate>& updates,
                        const policy::GuardrailRuleSet& rules, bool approver_connected) {
  PushDecision d;
  d.allowed = !updates.empty();
  std::vector<std::string> refused(updates.size());
  for (size_t i = 0; i < updates.size(); ++i) {
    policy::ActionRequest request;
    request.effects = {{policy::EffectClass::kPushToRemote, {updates[i].ref}}};
    request.approver_connected = approver_connected;
    const policy::GuardrailDecision ref = policy::ResolveAction(request, rules);
    if (ref.verdict == policy::PolicyVerdict::kAllow) continue;
    refused[i] = absl::StrCat(kPolicyPrefix, ": ", ref.reason);
    if (d.allowed) d.summary = absl::StrCat(updates[i].ref, " refused: ", ref.reason);
    d.allowed = false;
  }
  if (updates.empty()) d.summary = "no ref to update";
  for (size_t i = 0; i < updates.size(); ++i) {
    RefStatus status{updates[i].ref, refused[i]};
    if (!d.allowed && status.error.empty()) {
      status.error = absl::StrCat(kPolicyPrefix,
                                  ": not pushed, another ref of this push was refused (a push is "
                                  "forwarded whole or not at all)");
    }
    d.statuses.push_back(std::move(status));
  }
  if (d.allowed) d.summary = absl::StrCat(updates.size(), " ref(s) allowed");
  return d;
}

}  // namespace ccsandbox::gateway
