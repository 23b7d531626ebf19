#include "policy/guardrails/guardrails.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

using V = PolicyVerdict;
using E = EffectClass;

GuardrailRuleSet Rules(std::vector<std::string> lines) {
  absl::StatusOr<GuardrailRuleSet> rules = ParseGuardrailRules(lines);
  EXPECT_TRUE(rules.ok()) << rules.status();
  return rules.ok() ? *rules : GuardrailRuleSet{};
}

ActionRequest Push(std::vector<std::string> refs, bool approver = true,
                   std::string current_branch = "") {
  ActionRequest r;
  r.effects = {{E::kPushToRemote, std::move(refs)}};
  r.approver_connected = approver;
  r.current_branch = std::move(current_branch);
  return r;
}

TEST(ResolveAction, BranchScopedPushRules) {
  GuardrailRuleSet rules = Rules(
      {"allow push_to_remote", "deny push_to_remote main", "prompt push_to_remote release/*"});
  struct Case {
    std::vector<std::string> refs;
    std::string current;
    V verdict;
    int rule;  // deciding rule index, -1 default
  };
  for (const Case& c : std::vector<Case>{
           {{"feature/x"}, "", V::kAllow, 0},
           {{"main"}, "", V::kDeny, 1},
           {{"refs/heads/main"}, "", V::kDeny, 1},
           {{"release/1.0"}, "", V::kPrompt, 2},
           {{"release/1.0/hotfix"}, "", V::kPrompt, 2},
           {{"feature/x", "main"}, "", V::kDeny, 1},
           {{""}, "main", V::kDeny, 1},
           {{""}, "feature/y", V::kAllow, 0},
           {{}, "feature/y", V::kAllow, 0},
           {{"HEAD"}, "main", V::kDeny, 1},
           {{""}, "", V::kDeny, 1},   // current branch unknown: could be main
           {{"*"}, "", V::kDeny, 1},  // --all, $BRANCH
           {{"refs/tags/v1"}, "", V::kAllow, 0},
       }) {
    GuardrailDecision d = ResolveAction(Push(c.refs, true, c.current), rules);
    EXPECT_EQ(d.verdict, c.verdict) << d.reason;
    ASSERT_TRUE(d.decided_by.has_value());
    EXPECT_EQ(d.decided_by->rule_index, c.rule) << d.reason;
  }
}

TEST(ResolveAction, ScopedRuleWinsOverUnscopedEvenWhenLessRestrictive) {
  GuardrailRuleSet rules = Rules({"deny push_to_remote", "allow push_to_remote agent/*"});
  EXPECT_EQ(ResolveAction(Push({"agent/fix"}), rules).verdict, V::kAllow);
  EXPECT_EQ(ResolveAction(Push({"main"}), rules).verdict, V::kDeny);
  // Unknown ref: every rule applies.
  EXPECT_EQ(ResolveAction(Push({"*"}), rules).verdict, V::kDeny);
}

TEST(ResolveAction, UnknownRefAlsoGetsTheDefaultWhenOnlyScopedRulesExist) {
  GuardrailRuleSet rules = Rules({"allow push_to_remote agent/*"});
  rules.default_verdict = V::kDeny;
  EXPECT_EQ(ResolveAction(Push({"agent/a"}), rules).verdict, V::kAllow);
  EXPECT_EQ(ResolveAction(Push({"main"}), rules).verdict, V::kDeny);
  GuardrailDecision d = ResolveAction(Push({"*"}), rules);
  EXPECT_EQ(d.verdict, V::kDeny);
  EXPECT_EQ(d.decided_by->rule_index, -1);
}

TEST(ResolveAction, PromptWithoutApproverIsDenied) {
  GuardrailRuleSet rules = Rules({"prompt install_package"});
  ActionRequest r;
  r.effects = {{E::kInstallPackage, {}}};
  r.approver_connected = false;
  GuardrailDecision d = ResolveAction(r, rules);
  EXPECT_EQ(d.verdict, V::kDeny);
  EXPECT_EQ(d.rule_verdict, V::kPrompt);
  EXPECT_TRUE(d.denied_for_no_approver);
  EXPECT_NE(d.reason.find("no approver is connected"), std::string::npos) << d.reason;

  r.approver_connected = true;
  d = ResolveAction(r, rules);
  EXPECT_EQ(d.verdict, V::kPrompt);
  EXPECT_FALSE(d.denied_for_no_approver);
}

TEST(ResolveAction, DefaultIsPromptAndFailsClosed) {
  GuardrailRuleSet rules;
  ActionRequest r;
  r.effects = {{E::kWriteExternalTracker, {}}};
  GuardrailDecision d = ResolveAction(r, rules);
  EXPECT_EQ(d.rule_verdict, V::kPrompt);
  EXPECT_EQ(d.verdict, V::kDeny);
  EXPECT_NE(d.reason.find("default"), std::string::npos) << d.reason;
}

TEST(ResolveAction, MostRestrictiveEffectDecidesAndAllAreReported) {
  GuardrailRuleSet rules =
      Rules({"allow create_commit", "allow write_files", "deny network_access"});
  ActionRequest r;
  r.effects = {{E::kWriteFiles, {}}, {E::kCreateCommit, {}}, {E::kNetworkAccess, {}}};
  r.approver_connected = true;
  GuardrailDecision d = ResolveAction(r, rules);
  EXPECT_EQ(d.verdict, V::kDeny);
  EXPECT_EQ(d.decided_by->effect, E::kNetworkAccess);
  EXPECT_EQ(d.resolutions.size(), 3u);
  EXPECT_NE(d.reason.find("rule 3 \"deny network_access\""), std::string::npos) << d.reason;
}

TEST(ResolveAction, SameRuleSameClassMostRestrictiveWins) {
  GuardrailRuleSet rules = Rules({"allow delete_files", "deny delete_files"});
  ActionRequest r;
  r.effects = {{E::kDeleteFiles, {}}};
  r.approver_connected = true;
  EXPECT_EQ(ResolveAction(r, rules).verdict, V::kDeny);
}

TEST(ResolveAction, NoEffectsNothingToGuard) {
  GuardrailDecision d = ResolveAction(ActionRequest{}, GuardrailRuleSet{});
  EXPECT_EQ(d.verdict, V::kAllow);
  EXPECT_FALSE(d.decided_by.has_value());
}

TEST(RefPatternMatches, Table) {
  EXPECT_TRUE(RefPatternMatches("main", "main"));
  EXPECT_TRUE(RefPatternMatches("main", "refs/heads/main"));
  EXPECT_TRUE(RefPatternMatches("refs/heads/main", "main"));
  EXPECT_FALSE(RefPatternMatches("main", "main2"));
  EXPECT_FALSE(RefPatternMatches("main", "refs/tags/main"));
  EXPECT_TRUE(RefPatternMatches("release/*", "release/1"));
  EXPECT_TRUE(RefPatternMatches("release/*", "release/1/2"));
  EXPECT_FALSE(RefPatternMatches("release/*", "releases/1"));
  EXPECT_TRUE(RefPatternMatches("v1.?", "v1.2"));
  EXPECT_TRUE(RefPatternMatches("refs/tags/*", "refs/tags/v1"));
  EXPECT_FALSE(RefPatternMatches("refs/tags/*", "v1"));
  EXPECT_TRUE(RefPatternMatches("*", "refs/tags/v1"));
  EXPECT_TRUE(RefPatternMatches("*main*", "feature/main-fix"));
  // A '*' in the text is text (found by guardrails_fuzz against fnmatch).
  EXPECT_TRUE(RefPatternMatches("*x/*", "a *x/*b"));
}

TEST(ParseGuardrailRule, RoundTripsAndRejectsNonsense) {
  for (const char* text : {"allow push_to_remote", "deny push_to_remote main",
                           "prompt install_package", "deny push_to_remote refs/tags/*"}) {
    absl::StatusOr<GuardrailRule> rule = ParseGuardrailRule(text);
    ASSERT_TRUE(rule.ok()) << rule.status();
    EXPECT_EQ(FormatGuardrailRule(*rule), text);
  }
  EXPECT_EQ(ParseGuardrailRule("ask create_commit")->verdict, V::kPrompt);
  for (const char* text :
       {"", "deny", "maybe push_to_remote", "deny pushing", "deny install_package main",
        "deny push_to_remote a b c", "deny push_to_remote ma..in", "deny push_to_remote x:y",
        "deny push_to_remote [ab]"}) {
    EXPECT_FALSE(ParseGuardrailRule(text).ok()) << text;
  }
  EXPECT_NE(ParseGuardrailRule("deny pushing").status().message().find("known:"),
            std::string::npos);
}

TEST(ValidateGuardrailRules, RefPatternOnlyOnPush) {
  GuardrailRuleSet rules;
  rules.rules.push_back({E::kCreateCommit, "main", V::kDeny});
  EXPECT_FALSE(ValidateGuardrailRules(rules).ok());
  rules.rules[0].effect = E::kPushToRemote;
  EXPECT_TRUE(ValidateGuardrailRules(rules).ok());
}

TEST(EffectClass, IdsRoundTrip) {
  for (int i = 0; i < kEffectClassCount; ++i) {
    EffectClass e = static_cast<EffectClass>(i);
    EXPECT_EQ(EffectClassFromId(EffectClassId(e)), e);
    EXPECT_FALSE(EffectClassName(e).empty());
  }
  EXPECT_FALSE(EffectClassFromId("nope").has_value());
}

}  // namespace
}  // namespace ccsandbox::policy
