#include "policy/plan/trusted_names.h"

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

TrustedNameRules Standard() { return *TrustedNameRules::Create(StandardTrustedNameRules()); }

TEST(TrustedNameRules, StandardListMatchesAtAnyDepth) {
  const TrustedNameRules rules = Standard();
  struct Case {
    const char* path;
    const char* rule;  // nullptr: no match
  } cases[] = {
      {"/home/u/.bashrc", ".bashrc"},
      {"/w/deep/er/.zprofile", ".zprofile"},
      {"/home/u/.BASH_LOGIN", ".bash_login"},  // case folded
      {"/home/u/.config/fish/conf.d/x.fish", ".config/fish/**"},
      {"/home/u/.ssh", ".ssh/**"},
      {"/home/u/.ssh/authorized_keys", ".ssh/**"},
      {"/home/u/.gitconfig", ".gitconfig"},
      {"/home/u/.config/git/config", ".config/git/**"},
      {"/w/repo/.git", ".git"},
      {"/w/repo/.git/config", ".git/config"},
      {"/w/repo/.git/commondir", ".git/commondir"},
      {"/w/repo/.git/hooks", ".git/hooks/**"},
      {"/w/repo/.git/hooks/pre-commit", ".git/hooks/**"},
      {"/w/repo/.git/modules/lib/config", ".git/modules/**/config"},
      {"/w/repo/.git/modules/a/modules/b/config", ".git/modules/**/config"},
      {"/w/repo/.git/modules/a/hooks/post-checkout", ".git/modules/**/hooks/**"},
      {"/w/repo/.git/worktrees/wt/gitdir", ".git/worktrees/*/gitdir"},
      {"/w/sub/.git", ".git"},  // a linked worktree's pointer file
      {"/home/u/.config/autostart/x.desktop", ".config/autostart/**"},
      {"/home/u/.config/systemd/user/evil.service", ".config/systemd/user/**"},
      {"/home/u/.local/bin/ls", ".local/bin/**"},
      {"/home/u/.local/lib/python3.11/site-packages/evil.pth",
       ".local/lib/python*/site-packages/**"},
      {"/w/.envrc", ".envrc"},
      {"/w/.vscode/tasks.json", ".vscode/**"},
      {"/w/.mcp.json", ".mcp.json"},
      {"/w/.claude/settings.json", ".claude/**"},
      {"/w/opencode.json", "opencode.json"},
      {"/w/.roo/mcp.json", ".roo/**"},
      {"/w/.kiro/hooks/on-save.json", ".kiro/**"},
      {"/w/.zed/tasks.json", ".zed/**"},
      {"/w/.devcontainer/devcontainer.json", ".devcontainer/**"},
      {"/w/.nvim.lua", ".nvim.lua"},
      {"/w/sub/mise.toml", "mise.toml"},
      {"/w/CLAUDE.md", nullptr},  // instructions, not code: reviewed like any project file
      {"/w/src/HEAD", "HEAD"},    // a bare repository in the making
      {"/w/mirror.git/config", "*.git/config"},
      {"/w/mirror.git/hooks/post-receive", "*.git/hooks/**"},
      {"/w/repo/.git/HEAD", nullptr},  // git's own
      {"/w/repo/.git/modules/m/HEAD", nullptr},
      {"/home/u/.local/lib/python3.11/site-packages/pip/__init__.py",
       ".local/lib/python*/site-packages/**"},
      {"/w/.hg/hgrc", ".hg/hgrc"},
      {"/w/repo/.git/objects/ab/cdef", nullptr},
      {"/w/repo/.git/refs/heads/main", nullptr},
      {"/w/repo/.git/index", nullptr},
      {"/w/repo/.git/config.lock", nullptr},
      {"/w/repo/src/config", nullptr},
      {"/w/x.git/hooks/a", "*.git/hooks/**"},  // a conventional bare repository
      {"/w/bashrc", nullptr},
      {"/w/notes/.bashrc.txt", nullptr},
      {"/home/u/.config/other/x", nullptr},
  };
  for (const Case& c : cases) {
    std::optional<std::string> hit = rules.Match(c.path);
    if (c.rule == nullptr) {
      EXPECT_FALSE(hit.has_value()) << c.path << " matched " << *hit;
    } else {
      EXPECT_EQ(hit.value_or("<none>"), c.rule) << c.path;
    }
  }
}

// A directory renamed (or a symlink made) where its contents would become trusted.
TEST(TrustedNameRules, MatchBeneathCatchesNamesThatMakeTheirContentsTrusted) {
  const TrustedNameRules rules = Standard();
  EXPECT_EQ(rules.MatchBeneath("/home/u/.config").value_or(""), ".config/fish/**");
  EXPECT_TRUE(rules.MatchBeneath("/home/u/.local").has_value());
  EXPECT_TRUE(rules.MatchBeneath("/home/u/.local/lib/python3.11").has_value());
  EXPECT_TRUE(rules.MatchBeneath("/w/repo/.git").has_value());
  EXPECT_TRUE(rules.MatchBeneath("/w/repo/.git/modules/x").has_value());
  EXPECT_TRUE(rules.MatchBeneath("/w/repo/.git/worktrees/wt").has_value());
  EXPECT_FALSE(rules.MatchBeneath("/w/src").has_value());
  EXPECT_FALSE(rules.MatchBeneath("/w/repo/.git/objects").has_value());
  EXPECT_FALSE(rules.MatchBeneath("/w/build/out").has_value());
}

// The rule index never loses a rule the plain matcher would take: "**" matches every path, the
// root's no components included (found by filename_rules_fuzz).
TEST(TrustedNameRules, RulesOfOnlyDoubleStarsMatchEveryPath) {
  absl::StatusOr<TrustedNameRules> rules = TrustedNameRules::Create({"**"});
  ASSERT_TRUE(rules.ok());
  for (const char* path : {"/", "/w", "/w/x/y"}) {
    EXPECT_EQ(rules->Match(path).value_or(""), "**") << path;
  }
}

// The index never takes text inside a class for the literal end of a name: "*[ac*]x" matches
// "yax" (found by filename_rules_fuzz: it only tried names ending in "]x").
TEST(TrustedNameRules, AClassWithAStarIsNoLiteralSuffix) {
  absl::StatusOr<TrustedNameRules> rules = TrustedNameRules::Create({"*[ac*]x", "x\\*y/z"});
  ASSERT_TRUE(rules.ok());
  EXPECT_EQ(rules->Match("/w/yax").value_or(""), "*[ac*]x");
  EXPECT_EQ(rules->Match("/w/Y*X").value_or(""), "*[ac*]x");
  EXPECT_EQ(rules->Match("/w/x*Y/z").value_or(""), "x\\*y/z");
}

// Several "**" against a deep path: answered at once, not by backtracking through every way to
// split the path (found by filename_rules_fuzz: 30 s and more for 8 "**" and 40 components).
TEST(TrustedNameRules, ManyDoubleStarsOnADeepPathAreQuick) {
  std::string rule = "a";
  for (int i = 0; i < 12; ++i) rule += "/**";
  rule += "/b";
  absl::StatusOr<TrustedNameRules> rules = TrustedNameRules::Create({rule});
  ASSERT_TRUE(rules.ok());
  std::string deep = "/a";
  for (int i = 0; i < 200; ++i) deep += "/x";
  const absl::Time start = absl::Now();
  EXPECT_FALSE(rules->Match(deep + "/c").has_value());
  EXPECT_EQ(rules->Match(deep + "/b").value_or(""), rule);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(TrustedNameRules, BadRulesAreRefusedNamingTheField) {
  for (const char* bad : {"", "/abs", "a//b", "a/./b", "../x", "x[", "a\\"}) {
    absl::StatusOr<TrustedNameRules> r = TrustedNameRules::Create({bad});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("denyWriteNames"), std::string::npos) << r.status();
  }
  EXPECT_TRUE(TrustedNameRules::Create({"tools/*.sh", "**/Makefile.local"}).ok());
}

TEST(TrustedNameRules, EveryStandardRuleHasAReason) {
  for (const TrustedName& name : StandardTrustedNames()) {
    EXPECT_NE(std::string(name.why), "") << name.rule;
  }
  EXPECT_TRUE(TrustedNameRules::Create(StandardTrustedNameRules()).ok());
}

}  // namespace
}  // namespace ccsandbox::policy
