#include "policy/git_config_paths.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

TEST(GitConfigProgramPaths, Table) {
  struct Case {
    const char* config;
    std::vector<std::string> want;
  } cases[] = {
      {"[core]\n\thooksPath = .husky/_\n", {"/w/repo/.husky/_"}},
      {"[CORE]\n  HooksPath=\"githooks\" # ours\n", {"/w/repo/githooks"}},
      {"[core] hooksPath = /srv/hooks\n", {"/srv/hooks"}},
      {"[core]\n\thooksPath = ../shared/hooks\n", {"/w/shared/hooks"}},
      {"[include]\n\tpath = ../extra.cfg\n", {"/w/repo/extra.cfg"}},
      {"[includeIf \"gitdir:~/work/\"]\n\tpath = local.cfg\n", {"/w/repo/.git/local.cfg"}},
      {"[core]\n\tfsmonitor = .git/fsmon.sh\n", {"/w/repo/.git/fsmon.sh"}},
      {"[core]\n\tfsmonitor = true\n", {}},
      {"[core]\n\tfsmonitor = sh -c evil\n", {}},
      {"[core]\n\thooksPath = ~/hooks\n", {}},
      {"[remote \"origin\"]\n\tpath = x\n\turl = y\n", {}},
      {"; [core]\n# hooksPath = a\n[user]\n\tname = a\n", {}},
      {"[core]\n\thooksPath = ../../../../..\n", {}},  // climbs above /
  };
  for (const Case& c : cases) {
    EXPECT_EQ(GitConfigProgramPaths(c.config, "/w/repo", "/w/repo/.git"), c.want) << c.config;
  }
}

}  // namespace
}  // namespace ccsandbox::policy
