// libFuzzer target: the action guardrails (policy/guardrails/guardrails.h) — the push rules a
// client writes in a spec (push.rules) and the refs a push names (the agent's). Input: rule
// lines up to an empty line, then ref lines up to an empty line, then the current branch; the
// last byte says whether an approver is connected and which effects are asked. Invariants:
// never crash; an accepted rule prints back to itself; ref patterns agree with fnmatch(3);
// the decision is the one the header's resolution rules give (computed here from those rules:
// scoped matches win over unscoped rules, the most restrictive among the winners, the default
// when none, a ref only known at run time takes every rule of its class); such an unknown ref
// is never more permissive than any concrete ref; a prompt with nobody to answer is a deny,
// and only then is denied_for_no_approver set.
#include <fnmatch.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "policy/guardrails/guardrails.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using ccsandbox::policy::ActionRequest;
using ccsandbox::policy::EffectClass;
using ccsandbox::policy::GuardrailRule;
using ccsandbox::policy::GuardrailRuleSet;
using ccsandbox::policy::MostRestrictive;
using ccsandbox::policy::NormalizeRef;
using ccsandbox::policy::PolicyVerdict;

// The header's resolution for one effect and one normalised ref ("*": known at run time only).
PolicyVerdict Expected(EffectClass effect, const std::string& ref, const GuardrailRuleSet& set) {
  std::optional<PolicyVerdict> scoped, unscoped, any;
  for (const GuardrailRule& rule : set.rules) {
    if (rule.effect != effect) continue;
    auto add = [&](std::optional<PolicyVerdict>& v) {
      v = v.has_value() ? MostRestrictive(*v, rule.verdict) : rule.verdict;
    };
    add(any);
    if (effect != EffectClass::kPushToRemote) continue;
    if (rule.ref_pattern.empty()) {
      add(unscoped);
    } else if (ref != "*" && ccsandbox::policy::RefPatternMatches(rule.ref_pattern, ref)) {
      add(scoped);
    }
  }
  if (effect != EffectClass::kPushToRemote) return any.value_or(set.default_verdict);
  if (ref == "*") {
    if (!any.has_value()) return set.default_verdict;
    // A ref no scoped rule covers falls back to the default unless an unscoped rule covers it.
    return unscoped.has_value() ? *any : MostRestrictive(*any, set.default_verdict);
  }
  if (scoped.has_value()) return *scoped;
  return unscoped.value_or(set.default_verdict);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[size - 1];
  const std::string input(reinterpret_cast<const char*>(data), size - 1);
  std::vector<std::string> sections = absl::StrSplit(input, "\n\n");
  sections.resize(3);
  std::vector<std::string> lines = absl::StrSplit(sections[0], '\n', absl::SkipEmpty());
  std::vector<std::string> refs = absl::StrSplit(sections[1], '\n', absl::SkipEmpty());
  if (lines.size() > 12) lines.resize(12);
  if (refs.size() > 8) refs.resize(8);

  GuardrailRuleSet set;
  set.default_verdict = static_cast<PolicyVerdict>(flags % 3);
  for (const std::string& line : lines) {
    absl::StatusOr<GuardrailRule> rule = ccsandbox::policy::ParseGuardrailRule(line);
    if (!rule.ok()) {
      FUZZ_CHECK(rule.status().code() == absl::StatusCode::kInvalidArgument);
      continue;
    }
    const std::string printed = ccsandbox::policy::FormatGuardrailRule(*rule);
    absl::StatusOr<GuardrailRule> again = ccsandbox::policy::ParseGuardrailRule(printed);
    FUZZ_CHECK(again.ok() && again->effect == rule->effect && again->verdict == rule->verdict &&
               again->ref_pattern == rule->ref_pattern);
    FUZZ_CHECK(ccsandbox::policy::FormatGuardrailRule(*again) == printed);
    set.rules.push_back(*rule);
  }
  FUZZ_CHECK(ccsandbox::policy::ValidateGuardrailRules(set).ok());

  for (const GuardrailRule& rule : set.rules) {
    if (rule.ref_pattern.empty() || rule.ref_pattern == "*") continue;
    for (const std::string& ref : refs) {
      const std::string p = NormalizeRef(rule.ref_pattern), r = NormalizeRef(ref);
      if (r.find('\0') != std::string::npos) continue;
      const bool ours = ccsandbox::policy::RefPatternMatches(rule.ref_pattern, ref);
      if (ours != (fnmatch(p.c_str(), r.c_str(), 0) == 0)) {
        std::fprintf(stderr, "ref pattern '%s' %s '%s'; fnmatch disagrees\n", p.c_str(),
                     ours ? "matches" : "does not match", absl::CHexEscape(r).c_str());
      }
      FUZZ_CHECK(ours == (fnmatch(p.c_str(), r.c_str(), 0) == 0));
    }
  }

  ActionRequest request;
  request.current_branch = sections[2];
  request.approver_connected = flags & 4;
  request.effects.push_back({EffectClass::kPushToRemote, refs});
  if (flags & 8) request.effects.push_back({EffectClass::kInstallPackage, {}});
  const ccsandbox::policy::GuardrailDecision d = ccsandbox::policy::ResolveAction(request, set);

  // Each ref as ResolveAction reads it, then the header's rules.
  std::vector<std::string> asked = refs.empty() ? std::vector<std::string>{""} : refs;
  std::optional<PolicyVerdict> worst;
  size_t resolution = 0;
  for (const std::string& raw : asked) {
    std::string ref;
    if (raw.empty() || raw == "HEAD") {
      ref = request.current_branch.empty() ? "*" : NormalizeRef(request.current_branch);
    } else if (absl::StrContains(raw, '*') || absl::StrContains(raw, '$')) {
      ref = "*";
    } else {
      ref = NormalizeRef(raw);
    }
    const PolicyVerdict want = Expected(EffectClass::kPushToRemote, ref, set);
    FUZZ_CHECK(resolution < d.resolutions.size() && d.resolutions[resolution].ref == ref);
    FUZZ_CHECK(d.resolutions[resolution].verdict == want);
    ++resolution;
    worst = worst.has_value() ? MostRestrictive(*worst, want) : want;
    // A ref only known at run time is never more permissive than this one.
    FUZZ_CHECK(Expected(EffectClass::kPushToRemote, "*", set) >= want);
  }
  if (flags & 8) {
    const PolicyVerdict want = Expected(EffectClass::kInstallPackage, "", set);
    FUZZ_CHECK(d.resolutions.size() == resolution + 1 && d.resolutions.back().verdict == want);
    worst = MostRestrictive(*worst, want);
  }
  FUZZ_CHECK(d.resolutions.size() == resolution + ((flags & 8) ? 1 : 0));
  FUZZ_CHECK(d.rule_verdict == *worst);
  FUZZ_CHECK(d.decided_by.has_value() && d.decided_by->verdict == d.rule_verdict);
  const bool unanswered = d.rule_verdict == PolicyVerdict::kPrompt && !request.approver_connected;
  FUZZ_CHECK(d.denied_for_no_approver == unanswered);
  FUZZ_CHECK(d.verdict == (unanswered ? PolicyVerdict::kDeny : d.rule_verdict));
  FUZZ_CHECK(!d.reason.empty());
  return 0;
}
