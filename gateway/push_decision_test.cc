#include "gateway/push_decision.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ccsandbox::gateway {
namespace {

struct Case {
  std::string name;
  std::vector<std::string> rules;
  std::vector<std::string> refs;
  bool approver;
  bool allowed;
  // Per ref: "" ok, "refused" (its own reason), "along" (not pushed: another ref was refused).
  std::vector<std::string> outcome;
};

class PushDecisionTable : public ::testing::TestWithParam<Case> {};

TEST_P(PushDecisionTable, DecidesEveryRef) {
  const Case& c = GetParam();
  absl::StatusOr<policy::GuardrailRuleSet> rules = policy::ParseGuardrailRules(c.rules);
  ASSERT_TRUE(rules.ok()) << rules.status();
  std::vector<RefUpdate> updates;
  for (const std::string& ref : c.refs) {
    updates.push_back({std::string(40, 'a'), std::string(40, 'b'), ref});
  }
  const PushDecision d = DecidePush(updates, *rules, c.approver);
  EXPECT_EQ(d.allowed, c.allowed) << d.summary;
  ASSERT_EQ(d.statuses.size(), c.refs.size());
  for (size_t i = 0; i < c.refs.size(); ++i) {
    const RefStatus& s = d.statuses[i];
    EXPECT_EQ(s.ref, c.refs[i]);
    if (c.outcome[i].empty()) {
      EXPECT_EQ(s.error, "") << s.ref;
      continue;
    }
    EXPECT_TRUE(absl::StartsWith(s.error, "Control Center policy: ")) << s.error;
    EXPECT_EQ(absl::StrContains(s.error, "another ref of this push was refused"),
              c.outcome[i] == "along")
        << s.error;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rules, PushDecisionTable,
    ::testing::Values(
        Case{"FeatureAllowed",
             {"allow push_to_remote", "deny push_to_remote main"},
             {"refs/heads/feature/x"},
             false,
             true,
             {""}},
        Case{"MainDenied",
             {"allow push_to_remote", "deny push_to_remote main"},
             {"refs/heads/main"},
             false,
             false,
             {"refused"}},
        Case{"OneRefusedRefStopsTheWholePush",
             {"allow push_to_remote", "deny push_to_remote main"},
             {"refs/heads/feature/x", "refs/heads/main", "refs/tags/v1"},
             false,
             false,
             {"along", "refused", "along"}},
        Case{"APromptWithNoApproverIsADeny",
             {"prompt push_to_remote"},
             {"refs/heads/feature/x"},
             false,
             false,
             {"refused"}},
        Case{"APromptWithAnApproverIsNotYetAnAllow",
             {"prompt push_to_remote"},
             {"refs/heads/feature/x"},
             true,
             false,
             {"refused"}},
        Case{"NoRuleMeansPromptMeansDeny", {}, {"refs/heads/x"}, false, false, {"refused"}},
        Case{"BranchScopedAllow",
             {"deny push_to_remote", "allow push_to_remote feature/*"},
             {"refs/heads/feature/a/b", "refs/heads/fix"},
             false,
             false,
             {"along", "refused"}},
        // git resolves "main" as refs/main, then refs/tags/main, then refs/heads/main: a
        // tag named like a branch a rule is scoped to is decided as that branch too.
        Case{"ATagNamedLikeADeniedBranchIsDenied",
             {"allow push_to_remote", "deny push_to_remote main"},
             {"refs/tags/main", "refs/tags/v1"},
             false,
             false,
             {"refused", "along"}},
        Case{"ARefUnderRefsNamedLikeADeniedBranchIsDenied",
             {"allow push_to_remote", "deny push_to_remote release/*"},
             {"refs/release/1.0"},
             false,
             false,
             {"refused"}},
        Case{"AnotherTagIsAllowed",
             {"allow push_to_remote", "deny push_to_remote main"},
             {"refs/tags/v1", "refs/notes/commits", "refs/remotes/main"},
             false,
             true,
             {"", "", ""}},
        // Only a rule scoped to the branch makes it count: a tags-only allow stays one.
        Case{"TagsOnlyAllowIsNotTurnedIntoBranchDenies",
             {"deny push_to_remote", "allow push_to_remote refs/tags/*"},
             {"refs/tags/v1"},
             false,
             true,
             {""}},
        Case{"AnAllowedBranchsTagIsAllowed",
             {"deny push_to_remote", "allow push_to_remote refs/tags/*",
              "allow push_to_remote feature/*"},
             {"refs/tags/feature/x"},
             false,
             true,
             {""}},
        Case{"TagsByFullPattern",
             {"allow push_to_remote", "deny push_to_remote refs/tags/*"},
             {"refs/tags/v1"},
             false,
             false,
             {"refused"}}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(PushDecision, TheReasonNamesTheRefAndTheRule) {
  absl::StatusOr<policy::GuardrailRuleSet> rules =
      policy::ParseGuardrailRules({"allow push_to_remote", "deny push_to_remote main"});
  ASSERT_TRUE(rules.ok());
  const PushDecision d =
      DecidePush({{std::string(40, 'a'), std::string(40, 'b'), "refs/heads/main"}}, *rules, false);
  ASSERT_FALSE(d.allowed);
  EXPECT_TRUE(absl::StrContains(d.statuses[0].error, "main")) << d.statuses[0].error;
  EXPECT_TRUE(absl::StrContains(d.statuses[0].error, "deny push_to_remote main"))
      << d.statuses[0].error;
  EXPECT_TRUE(absl::StrContains(d.summary, "refs/heads/main")) << d.summary;
}

TEST(PushDecision, AShadowingTagSaysWhichBranchItWouldBe) {
  absl::StatusOr<policy::GuardrailRuleSet> rules =
      policy::ParseGuardrailRules({"allow push_to_remote", "deny push_to_remote main"});
  ASSERT_TRUE(rules.ok());
  const PushDecision d =
      DecidePush({{std::string(40, 'a'), std::string(40, 'b'), "refs/tags/main"}}, *rules, false);
  ASSERT_FALSE(d.allowed);
  EXPECT_TRUE(absl::StrContains(d.statuses[0].error,
                                "refs/tags/main is what git takes for main before the branch"))
      << d.statuses[0].error;
  EXPECT_TRUE(absl::StrContains(d.statuses[0].error, "deny push_to_remote main"))
      << d.statuses[0].error;
}

TEST(PushDecision, NothingToUpdateIsNotAnAllow) {
  const PushDecision d = DecidePush({}, policy::GuardrailRuleSet{}, true);
  EXPECT_FALSE(d.allowed);
  EXPECT_TRUE(d.statuses.empty());
}

// A push to an upstream alias of main updates main: judged as main too.
TEST(PushDecision, AnAliasOfADeniedBranchIsRefusedSayingSo) {
  absl::StatusOr<policy::GuardrailRuleSet> rules =
      policy::ParseGuardrailRules({"allow push_to_remote", "deny push_to_remote main"});
  ASSERT_TRUE(rules.ok());
  const RefUpdate master{std::string(40, 'a'), std::string(40, 'b'), "refs/heads/master"};
  EXPECT_TRUE(DecidePush({master}, *rules, false).allowed);
  const PushDecision d =
      DecidePush({master}, *rules, false, {{"refs/heads/master", "refs/heads/main"}});
  ASSERT_FALSE(d.allowed);
  EXPECT_TRUE(absl::StrContains(d.statuses[0].error,
                                "refs/heads/master is a symbolic ref to refs/heads/main"))
      << d.statuses[0].error;
}

}  // namespace
}  // namespace ccsandbox::gateway
