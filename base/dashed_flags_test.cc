#include "base/dashed_flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, dashed_flags_test_count, 0, "a flag for the test below");
ABSL_FLAG(std::string, dashed_flags_test_name, "", "a flag for the test below");

namespace ccsandbox {
namespace {

// UnderscoreFlagNames over a copy of `args` (argv[0] = "prog").
std::vector<std::string> Rewrite(std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::vector<std::string> out = UnderscoreFlagNames(static_cast<int>(argv.size()), argv.data());
  out.erase(out.begin());
  return out;
}

TEST(UnderscoreFlagNamesTest, RewritesFlagNamesOnly) {
  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"double dash", {"--allowed-uids=1,2"}, {"--allowed_uids=1,2"}},
      {"single dash", {"-allowed-uids=1"}, {"-allowed_uids=1"}},
      {"no value", {"--no-filename-denies"}, {"--no_filename_denies"}},
      {"dashes in the value stay", {"--spec=my-spec--x.json"}, {"--spec=my-spec--x.json"}},
      {"a separate value stays", {"--spec", "my-spec.json"}, {"--spec", "my-spec.json"}},
      {"underscores already", {"--allowed_uids=1"}, {"--allowed_uids=1"}},
      {"positional words stay", {"run", "some-file"}, {"run", "some-file"}},
      {"nothing after a bare --",
       {"--a-b", "--", "--c-d", "-e-f"},
       {"--a_b", "--", "--c-d", "-e-f"}},
      {"too short to be a flag", {"-", "-x"}, {"-", "-x"}},
      {"argv[0] and empty", {}, {}},
  };
  for (const Case& c : cases) EXPECT_EQ(Rewrite(c.args), c.want) << c.name;
}

TEST(ParseDashedCommandLineTest, SetsDashedFlagsAndReturnsThePositionalArguments) {
  std::vector<std::string> args = {"prog",       "--dashed-flags-test-count=3",
                                   "first-word", "--dashed-flags-test-name=a-b",
                                   "--",         "--not-a-flag"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  const std::vector<std::string> positional =
      ParseDashedCommandLine(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(absl::GetFlag(FLAGS_dashed_flags_test_count), 3);
  EXPECT_EQ(absl::GetFlag(FLAGS_dashed_flags_test_name), "a-b");
  EXPECT_EQ(positional, (std::vector<std::string>{"prog", "first-word", "--not-a-flag"}));
}

}  // namespace
}  // namespace ccsandbox
