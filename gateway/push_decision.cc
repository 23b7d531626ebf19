#include "gateway/push_decision.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ccsandbox::gateway {
namespace {

// The branch `ref` shadows when git resolves a short name — `git fetch origin main` and
// `git pull origin main` take refs/main, then refs/tags/main, before refs/heads/main — when a
// rule is scoped to that branch; "" otherwise. Such a ref is decided as that branch too, or a
// tag named main would carry the agent's commit to everyone who pulls main.
std::string ShadowedBranch(absl::string_view ref, const policy::GuardrailRuleSet& rules) {
  absl::string_view name = ref;
  if (!absl::ConsumePrefix(&name, "refs/") || absl::StartsWith(name, "heads/") ||
      absl::StartsWith(name, "remotes/")) {
    return "";
  }
  absl::ConsumePrefix(&name, "tags/");
  const std::string branch = absl::StrCat("refs/heads/", name);
  for (const policy::GuardrailRule& rule : rules.rules) {
    if (rule.effect == policy::EffectClass::kPushToRemote && !rule.ref_pattern.empty() &&
        policy::RefPatternMatches(rule.ref_pattern, branch)) {
      return branch;
    }
  }
  return "";
}

}  // namespace

PushDecision DecidePush(const std::vector<RefUpdate>& updates,
                        const policy::GuardrailRuleSet& rules, bool approver_connected,
                        const std::map<std::string, std::string>& symrefs) {
  PushDecision d;
  d.allowed = !updates.empty();
  std::vector<std::string> refused(updates.size());
  for (size_t i = 0; i < updates.size(); ++i) {
    policy::ActionRequest request;
    request.effects = {{policy::EffectClass::kPushToRemote, {updates[i].ref}}};
    const std::string shadowed = ShadowedBranch(updates[i].ref, rules);
    if (!shadowed.empty()) request.effects[0].refs.push_back(shadowed);
    auto alias = symrefs.find(updates[i].ref);
    const std::string target = alias == symrefs.end() ? "" : alias->second;
    if (!target.empty()) request.effects[0].refs.push_back(target);
    request.approver_connected = approver_connected;
    const policy::GuardrailDecision ref = policy::ResolveAction(request, rules);
    if (ref.verdict == policy::PolicyVerdict::kAllow) continue;
    refused[i] = absl::StrCat(kPolicyPrefix, ": ", ref.reason);
    if (!target.empty() && ref.decided_by.has_value() && ref.decided_by->ref == target) {
      refused[i] = absl::StrCat(kPolicyPrefix, ": ", updates[i].ref, " is a symbolic ref to ",
                                target, " on the upstream; ", ref.reason);
    } else if (ref.decided_by.has_value() && ref.decided_by->ref == shadowed) {
      refused[i] = absl::StrCat(kPolicyPrefix, ": ", updates[i].ref, " is what git takes for ",
                                absl::StripPrefix(shadowed, "refs/heads/"), " before the branch; ",
                                ref.reason);
    }
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
