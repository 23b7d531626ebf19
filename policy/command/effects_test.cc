#include "policy/command/effects.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

TEST(CommandEffects, MapsRulesAndMergesPushRefs) {
  std::vector<EffectRequest> effects = CommandEffects(ClassifyCommandLine(
      "git commit -am x && git push origin main && git push origin dev && curl -d x https://h"));
  ASSERT_EQ(effects.size(), 3u);
  EXPECT_EQ(effects[0].effect, EffectClass::kCreateCommit);
  EXPECT_EQ(effects[1].effect, EffectClass::kPushToRemote);
  EXPECT_EQ(effects[1].refs, (std::vector<std::string>{"main", "dev"}));
  EXPECT_EQ(effects[2].effect, EffectClass::kNetworkAccess);
  EXPECT_TRUE(CommandEffects(ClassifyCommandLine("ls && rm -rf build")).empty());
}

TEST(CommandEffects, FeedsTheGuardrails) {
  absl::StatusOr<GuardrailRuleSet> rules =
      ParseGuardrailRules({"allow push_to_remote", "deny push_to_remote main"});
  ASSERT_TRUE(rules.ok());
  ActionRequest request;
  request.approver_connected = true;
  request.effects = CommandEffects(ClassifyCommandLine("bash -c 'git push origin HEAD:main'"));
  EXPECT_EQ(ResolveAction(request, *rules).verdict, PolicyVerdict::kDeny);
  request.effects = CommandEffects(ClassifyCommandLine("git push -u origin agent/fix"));
  EXPECT_EQ(ResolveAction(request, *rules).verdict, PolicyVerdict::kAllow);
}

TEST(EffectClassForCommandRule, OnlyGuardrailRules) {
  EXPECT_EQ(EffectClassForCommandRule(CommandRule::kOpenPullRequest),
            EffectClass::kOpenPullRequest);
  EXPECT_FALSE(EffectClassForCommandRule(CommandRule::kMutating).has_value());
  EXPECT_FALSE(EffectClassForCommandRule(CommandRule::kReadOnly).has_value());
}

}  // namespace
}  // namespace ccsandbox::policy
