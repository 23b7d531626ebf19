#include "policy/plan/push_spec.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

struct Case {
  std::string name;
  std::vector<std::string> repositories;
  std::vector<std::string> rules;
  v1::SandboxBackend backend;
  std::string error;  // "" = accepted; else a piece of the message (the field it names)
};

class PushSpecTable : public ::testing::TestWithParam<Case> {};

TEST_P(PushSpecTable, AsTheTableSays) {
  const Case& c = GetParam();
  v1::SandboxSpec spec;
  for (const std::string& r : c.repositories) spec.mutable_push()->add_repositories(r);
  for (const std::string& r : c.rules) spec.mutable_push()->add_rules(r);
  spec.mutable_push();
  const absl::Status status = ValidatePushSpec(spec, c.backend);
  if (c.error.empty()) {
    EXPECT_TRUE(status.ok()) << status;
    EXPECT_TRUE(PushRulesOf(spec).ok());
    return;
  }
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find(c.error), std::string::npos) << status;
  EXPECT_LT(status.message().size(), 600u) << "bounded";
}

const v1::SandboxBackend kNative = v1::SANDBOX_BACKEND_NATIVE;

INSTANTIATE_TEST_SUITE_P(
    Specs, PushSpecTable,
    ::testing::Values(
        Case{"Accepted",
             {"https://github.com/o/r.git"},
             {"allow push_to_remote", "deny push_to_remote main"},
             kNative,
             ""},
        Case{"NoRules", {"https://github.com/o/r.git"}, {}, kNative, ""},
        Case{"NoneBackend",
             {"https://github.com/o/r.git"},
             {},
             v1::SANDBOX_BACKEND_NONE,
             "none backend"},
        Case{"BadRepository", {"git@github.com:o/r.git"}, {}, kNative, "push.repositories"},
        Case{"OtherEffect", {}, {"allow install_package"}, kNative, "push.rules[0]"},
        Case{"Unparseable",
             {},
             {"allow push_to_remote main", "maybe push_to_remote"},
             kNative,
             "push.rules[1]"},
        Case{"LongRule",
             {},
             {"deny push_to_remote " + std::string(2000, 'x')},
             kNative,
             "push.rules[0]: longer than 1024"},
        Case{"TooManyRules",
             {},
             std::vector<std::string>(257, "allow push_to_remote"),
             kNative,
             "push.rules: 257"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(PushSpec, NoPushIsFine) {
  EXPECT_TRUE(ValidatePushSpec(v1::SandboxSpec(), v1::SANDBOX_BACKEND_NONE).ok());
}

}  // namespace
}  // namespace ccsandbox::policy
