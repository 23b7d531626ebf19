#include "policy/plan/create_guard_rules.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/plan/trusted_names.h"

namespace ccsandbox::policy {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

TEST(GuardPlanFor, NoCreateGuardNoPlan) {
  v1::SandboxSpec spec;
  spec.add_protected_paths("/w/keep");
  EXPECT_FALSE(GuardPlanFor(spec, FilenamePolicyDecision{}, {"/home/u"}, DenyPaths{}).has_value());
}

TEST(GuardPlanFor, EveryRuleSourceReachesThePlan) {
  v1::SandboxSpec spec;
  spec.add_deny_write_names("tools/*.sh");
  spec.add_protected_paths("/w/keep");
  spec.add_protected_paths("/w/co*py");
  spec.add_protected_paths("/w/../escape");  // unnormalised: names no path the guard compares
  FilenamePolicyDecision filenames;
  filenames.create_guard = true;
  filenames.create_guard_patterns = {".env", "*.pem"};
  DenyPaths deny;
  deny.creation_denied = {"/w/repo/.husky/_"};
  const std::optional<v1::CreateGuardPlan> plan = GuardPlanFor(spec, filenames, {"/home/u"}, deny);
  ASSERT_TRUE(plan.has_value());
  EXPECT_THAT(plan->deny_patterns(), ElementsAre(".env", "*.pem"));
  EXPECT_THAT(plan->trusted_names(), ElementsAre("tools/*.sh"));
  EXPECT_THAT(plan->protected_paths(), Contains("/w/keep"));
  EXPECT_THAT(plan->protected_paths(), Contains("/w/co*py"));
  EXPECT_THAT(plan->protected_paths(), Not(Contains("/w/../escape")));
  EXPECT_THAT(plan->protected_paths(), Contains("/w/repo/.husky/_"));
  ASSERT_FALSE(HomeTrustedPaths().empty());
  EXPECT_THAT(plan->protected_paths(),
              Contains(absl::StrCat("/home/u/", HomeTrustedPaths().front().rule)));
}

}  // namespace
}  // namespace ccsandbox::policy
