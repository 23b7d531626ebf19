#include "policy/guardrails/guardrails.h"

#include <array>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::policy {
namespace {

struct EffectText {
  absl::string_view id;
  absl::string_view name;
};

constexpr std::array<EffectText, kEffectClassCount> kEffects = {{
    {"create_commit", "create a commit"},
    {"push_to_remote", "push to remote repository"},
    {"open_pull_request", "open a pull request"},
    {"publish_review_or_merge", "publish a review or perform a merge"},
    {"write_external_tracker", "write to an external tracker"},
    {"install_package", "install a package"},
    {"publish_package", "publish a package"},
    {"network_access", "network access"},
    {"change_remote_state", "change remote state"},
    {"write_files", "write files"},
    {"delete_files", "delete files"},
    {"run_command", "run a command"},
}};

// `*` matches any run of characters (including '/'), `?` one character.
bool GlobMatch(absl::string_view pattern, absl::string_view text) {
  size_t p = 0;
  size_t t = 0;
  size_t star = absl::string_view::npos;
  size_t star_t = 0;
  while (t < text.size()) {
    // '*' first: a '*' in the text is no reason to take the pattern's '*' for a literal.
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_t = t;
    } else if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (star != absl::string_view::npos) {
      p = star + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

absl::Status CheckRefPattern(absl::string_view pattern) {
  if (pattern.empty()) return absl::OkStatus();
  for (char c : pattern) {
    if (absl::ascii_iscntrl(c) || c == ' ' || c == '~' || c == '^' || c == ':' || c == '\\' ||
        c == '[') {
      return absl::InvalidArgumentError(
          absl::StrCat("ref pattern '", pattern, "' contains '", std::string(1, c),
                       "'; use a branch name, refs/… or a glob with * and ?"));
    }
  }
  if (absl::StrContains(pattern, "..") || absl::StrContains(pattern, "@{") ||
      absl::StartsWith(pattern, "/") || absl::EndsWith(pattern, "/")) {
    return absl::InvalidArgumentError(
        absl::StrCat("ref pattern '", pattern, "' is not a valid ref name or glob"));
  }
  return absl::OkStatus();
}

std::string RuleLabel(const GuardrailRuleSet& rules, int index) {
  if (index < 0) {
    return absl::StrCat("no rule names it, so the default (",
                        PolicyVerdictName(rules.default_verdict), ") applies");
  }
  return absl::StrCat("rule ", index + 1, " \"", FormatGuardrailRule(rules.rules[index]), "\"");
}

// The verdict and deciding rule for one effect and (for pushes) one normalised ref or "*".
EffectResolution Resolve(EffectClass effect, const std::string& ref,
                         const GuardrailRuleSet& rules) {
  EffectResolution r;
  r.effect = effect;
  r.ref = ref;
  const bool push = effect == EffectClass::kPushToRemote;
  const bool unknown_ref = push && ref == "*";
  int best = -1;
  auto consider = [&](int i) {
    if (best < 0 || rules.rules[i].verdict > rules.rules[best].verdict) best = i;
  };
  // Scoped rules matching the ref (every scoped rule when the ref is unknown) win over
  // unscoped ones; for other effects every rule of the class counts.
  bool any_unscoped = false;
  for (int i = 0; i < static_cast<int>(rules.rules.size()); ++i) {
    const GuardrailRule& rule = rules.rules[i];
    if (rule.effect != effect) continue;
    if (!push) {
      consider(i);
    } else if (rule.ref_pattern.empty()) {
      any_unscoped = true;
    } else if (unknown_ref || RefPatternMatches(rule.ref_pattern, ref)) {
      consider(i);
    }
  }
  if (push && (best < 0 || unknown_ref)) {
    for (int i = 0; i < static_cast<int>(rules.rules.size()); ++i) {
      const GuardrailRule& rule = rules.rules[i];
      if (rule.effect == effect && rule.ref_pattern.empty()) consider(i);
    }
  }
  if (best >= 0) {
    r.verdict = rules.rules[best].verdict;
    r.rule_index = best;
    // An unknown ref may also be one no scoped rule covers: the fallback applies too.
    if (unknown_ref && !any_unscoped && rules.default_verdict > r.verdict) {
      r.verdict = rules.default_verdict;
      r.rule_index = -1;
    }
    return r;
  }
  r.verdict = rules.default_verdict;
  return r;
}

std::string Describe(const EffectResolution& r) {
  if (r.effect != EffectClass::kPushToRemote) return std::string(EffectClassName(r.effect));
  return absl::StrCat(EffectClassName(r.effect), " (",
                      r.ref == "*" ? "a ref only known at run time" : r.ref, ")");
}

}  // namespace

absl::string_view EffectClassId(EffectClass effect) {
  return kEffects[static_cast<int>(effect)].id;
}

absl::string_view EffectClassName(EffectClass effect) {
  return kEffects[static_cast<int>(effect)].name;
}

std::optional<EffectClass> EffectClassFromId(absl::string_view id) {
  for (int i = 0; i < kEffectClassCount; ++i) {
    if (kEffects[i].id == id) return static_cast<EffectClass>(i);
  }
  return std::nullopt;
}

std::string NormalizeRef(absl::string_view ref) {
  if (ref == "*" || absl::StartsWith(ref, "refs/")) return std::string(ref);
  return absl::StrCat("refs/heads/", ref);
}

bool RefPatternMatches(absl::string_view pattern, absl::string_view ref) {
  if (pattern == "*") return true;
  return GlobMatch(NormalizeRef(pattern), NormalizeRef(ref));
}

absl::Status ValidateGuardrailRules(const GuardrailRuleSet& rules) {
  for (size_t i = 0; i < rules.rules.size(); ++i) {
    const GuardrailRule& rule = rules.rules[i];
    if (static_cast<int>(rule.effect) < 0 || static_cast<int>(rule.effect) >= kEffectClassCount) {
      return absl::InvalidArgumentError(absl::StrCat("rule ", i + 1, ": unknown effect class"));
    }
    if (!rule.ref_pattern.empty() && rule.effect != EffectClass::kPushToRemote) {
      return absl::InvalidArgumentError(
          absl::StrCat("rule ", i + 1, ": a ref pattern only applies to push_to_remote, not ",
                       EffectClassId(rule.effect)));
    }
    if (absl::Status s = CheckRefPattern(rule.ref_pattern); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("rule ", i + 1, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<GuardrailRule> ParseGuardrailRule(absl::string_view text) {
  std::vector<absl::string_view> words =
      absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (words.size() < 2 || words.size() > 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "guardrail rule '", text, "': expected '<allow|prompt|deny> <effect> [<ref pattern>]'"));
  }
  GuardrailRule rule;
  if (words[0] == "allow") {
    rule.verdict = PolicyVerdict::kAllow;
  } else if (words[0] == "prompt" || words[0] == "ask") {
    rule.verdict = PolicyVerdict::kPrompt;
  } else if (words[0] == "deny") {
    rule.verdict = PolicyVerdict::kDeny;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("guardrail rule '", text, "': '", words[0], "' is not allow, prompt or deny"));
  }
  std::optional<EffectClass> effect = EffectClassFromId(words[1]);
  if (!effect.has_value()) {
    std::vector<absl::string_view> ids;
    for (const EffectText& e : kEffects) ids.push_back(e.id);
    return absl::InvalidArgumentError(absl::StrCat("guardrail rule '", text, "': unknown effect '",
                                                   words[1],
                                                   "'; known: ", absl::StrJoin(ids, ", ")));
  }
  rule.effect = *effect;
  if (words.size() == 3) rule.ref_pattern = std::string(words[2]);
  GuardrailRuleSet one;
  one.rules.push_back(rule);
  if (absl::Status s = ValidateGuardrailRules(one); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("guardrail rule '", text, "': ", s.message().substr(sizeof("rule 1: ") - 1)));
  }
  return rule;
}

absl::StatusOr<GuardrailRuleSet> ParseGuardrailRules(absl::Span<const std::string> lines) {
  GuardrailRuleSet set;
  for (const std::string& line : lines) {
    absl::StatusOr<GuardrailRule> rule = ParseGuardrailRule(line);
    if (!rule.ok()) return rule.status();
    set.rules.push_back(*std::move(rule));
  }
  return set;
}

std::string FormatGuardrailRule(const GuardrailRule& rule) {
  std::string out = absl::StrCat(PolicyVerdictName(rule.verdict), " ", EffectClassId(rule.effect));
  if (!rule.ref_pattern.empty()) absl::StrAppend(&out, " ", rule.ref_pattern);
  return out;
}

GuardrailDecision ResolveAction(const ActionRequest& request, const GuardrailRuleSet& rules) {
  GuardrailDecision d;
  if (request.effects.empty()) {
    d.verdict = PolicyVerdict::kAllow;
    d.rule_verdict = PolicyVerdict::kAllow;
    d.reason = "the action declares no effect classes";
    return d;
  }
  for (const EffectRequest& e : request.effects) {
    if (e.effect != EffectClass::kPushToRemote) {
      d.resolutions.push_back(Resolve(e.effect, "", rules));
      continue;
    }
    std::vector<std::string> refs = e.refs;
    if (refs.empty()) refs.push_back("");
    for (const std::string& raw : refs) {
      std::string ref;
      if (raw.empty() || raw == "HEAD") {
        ref = request.current_branch.empty() ? "*" : NormalizeRef(request.current_branch);
      } else if (absl::StrContains(raw, '*') || absl::StrContains(raw, '$')) {
        ref = "*";
      } else {
        ref = NormalizeRef(raw);
      }
      d.resolutions.push_back(Resolve(e.effect, ref, rules));
    }
  }
  const EffectResolution* decider = nullptr;
  for (const EffectResolution& r : d.resolutions) {
    if (decider == nullptr || r.verdict > decider->verdict) decider = &r;
  }
  d.decided_by = *decider;
  d.rule_verdict = decider->verdict;
  d.verdict = decider->verdict;
  d.reason = absl::StrCat(Describe(*decider), ": ", PolicyVerdictName(decider->verdict), " by ",
                          RuleLabel(rules, decider->rule_index));
  if (d.rule_verdict == PolicyVerdict::kPrompt && !request.approver_connected) {
    d.verdict = PolicyVerdict::kDeny;
    d.denied_for_no_approver = true;
    absl::StrAppend(&d.reason,
                    "; no approver is connected, and a question nobody answers is never counted "
                    "as consent, so it is denied");
  }
  return d;
}

}  // namespace ccsandbox::policy
