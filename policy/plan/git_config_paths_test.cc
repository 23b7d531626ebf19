#include "policy/plan/git_config_paths.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

TEST(GitConfigProgramPaths, Table) {
  struct Case {
    const char* config;
    std::vector<std::string> programs;
    std::vector<std::string> includes;
  } cases[] = {
      {"[core]\n\thooksPath = .husky/_\n", {"/w/repo/.husky/_"}, {}},
      {"[CORE]\n  HooksPath=\"githooks\" # ours\n", {"/w/repo/githooks"}, {}},
      {"[core] hooksPath = /srv/hooks\n", {"/srv/hooks"}, {}},
      {"[core]\n\thooksPath = ../shared/hooks\n", {"/w/shared/hooks"}, {}},
      {"[core]\n\thooksPath = ~/hooks\n", {"/home/u/hooks"}, {}},
      {"[core]\n\thooksPath = ~other/hooks\n", {}, {}},
      {"[include]\n\tpath = ../extra.cfg\n", {}, {"/w/repo/extra.cfg"}},
      {"[includeIf \"gitdir:~/work/\"]\n\tpath = local.cfg\n", {}, {"/w/repo/.git/local.cfg"}},
      {"[core]\n\tfsmonitor = .git/fsmon.sh\n", {"/w/repo/.git/fsmon.sh"}, {}},
      {"[core]\n\tfsmonitor = true\n", {}, {}},
      {"[core]\n\tsshCommand = ./tools/ssh.sh -v\n", {"/w/repo/tools/ssh.sh"}, {}},
      {"[filter \"x\"]\n\tclean = ./tools/clean.sh %f\n\tsmudge = cat\n",
       {"/w/repo/tools/clean.sh"},
       {}},
      {"[diff \"pdf\"]\n\ttextconv = bin/pdf2txt\n", {"/w/repo/bin/pdf2txt"}, {}},
      {"[alias]\n\tt = !./tools/t.sh arg\n\tst = status\n", {"/w/repo/tools/t.sh"}, {}},
      {"[credential]\n\thelper = /usr/lib/git-core/git-credential-store\n",
       {"/usr/lib/git-core/git-credential-store"},
       {}},
      {"[remote \"origin\"]\n\turl = ../other\n\tpath = x\n", {}, {}},
      {"[url \"https://x/\"]\n\tinsteadOf = git@x:\n", {}, {}},
      {"; [core]\n# hooksPath = a\n[user]\n\tname = a\n", {}, {}},
      {"[core]\n\thooksPath = ../../../../..\n", {}, {}},  // climbs above /
      // `[ "sub"]` is section "" with a subsection for git (found by git_config_fuzz): read on.
      {"[ \"sub\"]\n\tclean = ./bin/clean %f\n", {"/w/repo/bin/clean"}, {}},
      {"[]\n\tclean = ./bin/clean %f\n", {}, {}},  // git stops at an empty header
      // As git reads values (found by git_config_fuzz against `git config --list`): a '\\'
      // before the newline continues the value, \\t is a tab (the program is the first word).
      {"[core]\n\thooksPath = .git/ho\\\nok\\\ns\n", {"/w/repo/.git/hooks"}, {}},
      // A backslash at the very end continues onto the end of the file: git keeps the value
      // (found by git_config_fuzz); inside quotes it is an error.
      {"[core]\n\thooksPath = .git/ho\\", {"/w/repo/.git/ho"}, {}},
      {"[core]\n\thooksPath = \".git/ho\\", {}, {}},
      {"[core]\n\teditor = ./tools/ed\\t--wait\n", {"/w/repo/tools/ed"}, {}},
      {"[core]\r\n\thooksPath = \"h d\"\\\\x\r\n", {"/w/repo/h d\\x"}, {}},
      {"\xef\xbb\xbf[core.sub]\n\tpager=./p\n", {"/w/repo/p"}, {}},
      {"[core] hooksPath = a\n[core] pager = \\q./p\n[core] editor = ./e\n", {"/w/repo/a"}, {}},
      {"top = 1\n[core]\n\thooksPath = h\n", {"/w/repo/h"}, {}},  // git reads on
  };
  for (const Case& c : cases) {
    GitConfigPaths found = GitConfigProgramPaths(c.config, "/w/repo", "/w/repo/.git", "/home/u");
    EXPECT_EQ(found.programs, c.programs) << c.config;
    EXPECT_EQ(found.includes, c.includes) << c.config;
  }
  // A user-level config: relative programs depend on the repository, so they are skipped.
  EXPECT_TRUE(GitConfigProgramPaths("[core]\n\thooksPath = hooks\n", "", "/home/u", "/home/u")
                  .programs.empty());
}

}  // namespace
}  // namespace ccsandbox::policy
