#include "policy/plan/env_scrub.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

TEST(ScrubEnvironment, RemovesInjectionVectorsAndKeepsTheRest) {
  std::map<std::string, std::string> env = {
      {"LD_PRELOAD", "/x.so"},
      {"LD_AUDIT", "/a.so"},
      {"LD_LIBRARY_PATH", "/l"},
      {"DYLD_INSERT_LIBRARIES", "x"},
      {"NODE_OPTIONS", "-r x"},
      {"GIT_SSH_COMMAND", "sh"},
      {"BASH_ENV", "/e"},
      {"ENV", "/e"},
      {"PERL5OPT", "-Mx"},
      {"RUBYOPT", "-rx"},
      {"PYTHONSTARTUP", "/p"},
      {"JAVA_TOOL_OPTIONS", "-x"},
      {"BASH_FUNC_ls%%", "() { x; }"},
      {"GIT_CONFIG_COUNT", "1"},
      {"GLIBC_TUNABLES", "x"},
      {"PATH", "/usr/bin"},
      {"HOME", "/h"},
      {"MY_VAR", "1"},
      {"LANG", "C.UTF-8"},
  };
  std::vector<std::string> removed = ScrubEnvironment(env);
  EXPECT_EQ(removed.size(), 15u);
  std::map<std::string, std::string> kept = {
      {"HOME", "/h"}, {"LANG", "C.UTF-8"}, {"MY_VAR", "1"}, {"PATH", "/usr/bin"}};
  EXPECT_EQ(env, kept);
}

TEST(ScrubEnvironment, RemovesMalformedNames) {
  std::map<std::string, std::string> env = {{"", "x"}, {"A=B", "x"}, {"OK", "1"}};
  EXPECT_EQ(ScrubEnvironment(env).size(), 2u);
  EXPECT_EQ(env.size(), 1u);
}

TEST(IsScrubbedEnvName, IsExactForNamesAndPrefixOnlyForFamilies) {
  EXPECT_TRUE(IsScrubbedEnvName("LD_ANYTHING"));
  EXPECT_FALSE(IsScrubbedEnvName("ENVIRONMENT"));
  EXPECT_FALSE(IsScrubbedEnvName("OLD_PRELOAD"));
  EXPECT_FALSE(IsScrubbedEnvName("NODE_ENV"));
}

}  // namespace
}  // namespace ccsandbox::policy
