#include "policy/command/git_subcommands.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

using R = CommandRule;

// Space-separated literal words.
std::vector<ShellWord> Words(absl::string_view line) {
  std::vector<ShellWord> words;
  for (absl::string_view w : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
    words.push_back(ShellWord{std::string(w), std::string(w), 0});
  }
  return words;
}

struct Example {
  absl::string_view line;  // the words after "git"
  GitAction action = GitAction::kFinding;
  CommandRule rule = R::kUnknownProgram;
  absl::string_view reason;
};

Example Finds(absl::string_view line, CommandRule rule, absl::string_view reason) {
  return Example{line, GitAction::kFinding, rule, reason};
}
Example Acts(absl::string_view line, GitAction action) { return Example{line, action}; }

// At least one example for every case of every row and for every row's `otherwise`.
const std::vector<Example>& Examples() {
  static const auto* examples = new std::vector<Example>{
      Acts("push origin main", GitAction::kPush),
      Finds("lfs push origin main", R::kPushToRemote, "lfs push uploads objects to a remote"),
      Finds("lfs", R::kReadOnly, "lfs only shows state"),
      Finds("lfs ls-files", R::kReadOnly, "lfs ls-files only shows state"),
      Finds("lfs install", R::kMutating, "lfs install changes the repository"),
      Finds("svn dcommit", R::kPushToRemote, "svn dcommit sends commits to a remote repository"),
      Finds("p4 submit", R::kPushToRemote, "p4 submit sends commits to a remote repository"),
      Finds("p4 sync", R::kMutating, "p4 changes the repository"),
      Finds("send-email 0001.patch", R::kNetworkWrite, "send-email sends patches by mail"),
      Finds("commit --quit", R::kMutating, "commit abandons an operation in progress"),
      Finds("commit --dry-run", R::kReadOnly,
            "commit --dry-run only shows what would be committed"),
      Finds("commit -m x", R::kCreateCommit, "commit creates commits"),
      Finds("rebase --abort", R::kMutating, "rebase abandons an operation in progress"),
      Finds("cherry-pick abc", R::kCreateCommit, "cherry-pick creates commits"),
      Finds("pull --abort", R::kMutating, "pull abandons an operation in progress"),
      Finds("pull", R::kCreateCommit, "pull fetches and merges or rebases (creates commits)"),
      Finds("log --output=log.txt", R::kMutating, "log --output writes a file"),
      Finds("diff --ext-diff", R::kOpaqueProgram,
            "diff --ext-diff runs the configured diff program"),
      Finds("show HEAD", R::kReadOnly, "show only reads the repository"),
      Finds("grep -Oless x", R::kOpaqueProgram, "grep -O runs a pager command on the matches"),
      Finds("grep --open-files-in-pager=vim x", R::kOpaqueProgram,
            "grep -O runs a pager command on the matches"),
      Finds("grep -n x", R::kReadOnly, "grep only reads the repository"),
      Finds("status --short", R::kReadOnly, "status only reads the repository"),
      Finds("archive -o out.tar HEAD", R::kMutating, "archive writes a file"),
      Finds("archive --remote=origin HEAD", R::kNetworkAccess, "archive reads a remote"),
      Finds("archive HEAD", R::kReadOnly, "archive writes to standard output"),
      Finds("format-patch --stdout HEAD~1", R::kReadOnly, "format-patch --stdout"),
      Finds("format-patch HEAD~1", R::kMutating, "format-patch writes patch files"),
      Finds("apply --check x.patch", R::kReadOnly, "apply only checks the patch"),
      Finds("apply --stat --apply x.patch", R::kMutating, "apply changes files"),
      Finds("hash-object f", R::kReadOnly, "hash-object only computes a hash"),
      Finds("hash-object -w f", R::kMutating, "hash-object changes the repository or working tree"),
      Finds("symbolic-ref HEAD", R::kReadOnly, "symbolic-ref reads a ref"),
      Finds("symbolic-ref HEAD refs/heads/x", R::kMutating,
            "symbolic-ref changes the repository or working tree"),
      Finds("interpret-trailers msg", R::kReadOnly, "interpret-trailers writes to standard output"),
      Finds("interpret-trailers --in-place msg", R::kMutating,
            "interpret-trailers changes the repository or working tree"),
      Finds("ls-remote origin", R::kNetworkAccess, "ls-remote reads a remote's refs"),
      Finds("fetch --dry-run", R::kNetworkAccess, "fetch --dry-run only contacts the remote"),
      Finds("fetch origin", R::kMutating, "fetch updates remote-tracking refs and objects"),
      Finds("clone https://example.com/r.git", R::kMutating, "clone writes a new repository"),
      Finds("remote -v", R::kReadOnly, "remote lists remotes"),
      Finds("remote get-url origin", R::kReadOnly, "remote lists remotes"),
      Finds("remote add fork url", R::kMutating, "remote add changes remotes"),
      Finds("branch -D old", R::kMutating, "branch changes branches"),
      Finds("branch --list feature*", R::kReadOnly, "branch lists branches"),
      Finds("branch --sort -committerdate", R::kReadOnly, "branch lists branches"),
      Finds("branch feature", R::kMutating, "branch creates a branch"),
      Finds("tag -a v1 -m x", R::kMutating, "tag creates or deletes tags"),
      Finds("tag -l v1*", R::kReadOnly, "tag lists tags"),
      Finds("tag", R::kReadOnly, "tag lists tags"),
      Finds("tag v1", R::kMutating, "tag creates a tag"),
      Acts("config user.name", GitAction::kConfig),
      Finds("stash list", R::kReadOnly, "stash list only shows state"),
      Finds("stash", R::kMutating, "stash changes the repository"),
      Finds("worktree list", R::kReadOnly, "worktree list only shows state"),
      Finds("sparse-checkout set src", R::kMutating, "sparse-checkout set changes the repository"),
      Finds("notes", R::kReadOnly, "notes only shows state"),
      Finds("notes show HEAD", R::kReadOnly, "notes show only shows state"),
      Finds("notes add -m x", R::kMutating, "notes add changes the repository"),
      Finds("reflog", R::kReadOnly, "reflog only shows state"),
      Finds("reflog exists main", R::kReadOnly, "reflog exists only shows state"),
      Finds("reflog expire --all", R::kMutating, "reflog expire changes the repository"),
      Acts("submodule foreach ls", GitAction::kSubmoduleForeach),
      Finds("submodule", R::kReadOnly, "submodule only shows state"),
      Finds("submodule status", R::kReadOnly, "submodule status only shows state"),
      Finds("submodule update --init", R::kMutating, "submodule update changes the repository"),
      Acts("bisect run make test", GitAction::kBisectRun),
      Finds("bisect log", R::kReadOnly, "bisect log only shows state"),
      Finds("bisect", R::kMutating, "bisect changes the repository"),
      Finds("difftool HEAD~1", R::kOpaqueProgram, "difftool runs other programs"),
      Finds("add .", R::kMutating, "add changes the repository or working tree"),
      Finds("frobnicate", R::kUnknownProgram,
            "frobnicate is not a known git subcommand (an alias or a git-frobnicate program "
            "would run)"),
  };
  return *examples;
}

TEST(GitSubcommands, EveryExampleDecidesAsWritten) {
  for (const Example& e : Examples()) {
    std::vector<ShellWord> words = Words(e.line);
    ASSERT_FALSE(words.empty());
    GitDecision d =
        DecideGitSubcommand(words[0].text, absl::Span<const ShellWord>(words).subspan(1));
    EXPECT_EQ(d.action, e.action) << e.line;
    if (e.action != GitAction::kFinding) continue;
    EXPECT_EQ(d.rule, e.rule) << e.line << ": " << CommandRuleId(d.rule);
    EXPECT_EQ(d.reason, e.reason) << e.line;
  }
}

TEST(GitSubcommands, EveryRowAndEveryCaseHasAnExample) {
  std::set<std::pair<const GitSubcommand*, int>> decided;
  for (const Example& e : Examples()) {
    std::vector<ShellWord> words = Words(e.line);
    GitDecision d =
        DecideGitSubcommand(words[0].text, absl::Span<const ShellWord>(words).subspan(1));
    decided.emplace(d.row, d.case_index);
  }
  for (const GitSubcommand& row : GitSubcommands()) {
    for (int i = -1; i < static_cast<int>(row.cases.size()); ++i) {
      const std::string which = i < 0 ? "otherwise" : absl::StrCat("case ", i);
      EXPECT_TRUE(decided.count({&row, i}) > 0)
          << "no example reaches " << which << " of '" << row.names << "'";
    }
  }
}

TEST(GitSubcommands, EveryNameIsLowerCaseAndInOneRow) {
  std::set<std::string> seen;
  for (const GitSubcommand& row : GitSubcommands()) {
    ASSERT_FALSE(row.names.empty());
    for (absl::string_view name : absl::StrSplit(row.names, ' ', absl::SkipEmpty())) {
      EXPECT_TRUE(seen.emplace(name).second) << name << " is in two rows";
      EXPECT_EQ(name, absl::AsciiStrToLower(name));
      EXPECT_EQ(DecideGitSubcommand(name, {}).row, &row) << name;
    }
    for (const GitCase& c : row.cases) {
      const GitTest& t = c.when;
      EXPECT_TRUE(!t.has.empty() || !t.lacks.empty() || t.no_verb || !t.verbs.empty() ||
                  t.max_operands >= 0)
          << "a case of '" << row.names << "' holds always";
      if (c.then.action == GitAction::kFinding) {
        EXPECT_FALSE(c.then.what.empty()) << row.names;
      }
    }
    if (row.otherwise.action == GitAction::kFinding) {
      EXPECT_FALSE(row.otherwise.what.empty()) << row.names;
    }
  }
}

TEST(GitTestHolds, EachPartOfATest) {
  struct Row {
    GitTest test;
    absl::string_view args;
    bool holds;
  };
  const Row kTable[] = {
      {{.has = "--output"}, "--output x", true},
      {{.has = "--output"}, "--output=x", true},
      {{.has = "--output"}, "--outputs", false},
      {{.has = "-o"}, "-o=x", false},  // only long options take "=value"
      {{.has = "-O*"}, "-Oless", true},
      {{.has = "-O*"}, "-o", false},
      {{.has = "-a -b"}, "x -b", true},
      {{.lacks = "-w"}, "f", true},
      {{.lacks = "-w"}, "-w f", false},
      {{.has = "--check", .lacks = "--apply"}, "--check --apply", false},
      {{.no_verb = true}, "-v --all", true},
      {{.no_verb = true}, "-v show", false},
      {{.no_verb = true}, "-- -v", false},  // after --, every word is an operand
      {{.verbs = "list show"}, "-q show x", true},
      {{.verbs = "list show"}, "drop show", false},
      {{.verbs = "list"}, "", false},
      {{.max_operands = 0, .skip = "--sort"}, "--sort name", true},
      {{.max_operands = 0, .skip = "--sort"}, "--sort=name x", false},
      {{.max_operands = 0}, "--sort name", false},
      {{.max_operands = 1}, "a", true},
      {{.max_operands = 1}, "a b", false},
  };
  for (const Row& row : kTable) {
    std::vector<ShellWord> words = Words(row.args);
    EXPECT_EQ(GitTestHolds(row.test, words), row.holds) << "'" << row.args << "'";
  }
}

}  // namespace
}  // namespace ccsandbox::policy
