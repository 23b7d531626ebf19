#include "policy/command/gh_subcommands.h"

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

struct Example {
  absl::string_view command;
  absl::string_view verb;
  GhAction action;
  CommandRule rule;
  absl::string_view reason;
};

Example Finds(absl::string_view command, absl::string_view verb, CommandRule rule,
              absl::string_view reason) {
  return Example{command, verb, GhAction::kFinding, rule, reason};
}

// At least one example for every case of every row and for every row's `otherwise`.
const std::vector<Example>& Examples() {
  static const auto* examples = new std::vector<Example>{
      Finds("search", "repos", R::kNetworkAccess, "search repos reads from GitHub"),
      Finds("status", "", R::kNetworkAccess, "status reads from GitHub"),
      Finds("pr", "create", R::kOpenPullRequest, "pr create opens a pull request"),
      Finds("pr", "new", R::kOpenPullRequest, "pr new opens a pull request"),
      Finds("pr", "merge", R::kPublishReviewOrMerge,
            "pr merge publishes a review or performs a merge"),
      Finds("pr", "review", R::kPublishReviewOrMerge,
            "pr review publishes a review or performs a merge"),
      Finds("pr", "checks", R::kNetworkAccess, "pr checks reads from GitHub"),
      Finds("pr", "co", R::kMutating, "pr co checks a branch out locally"),
      Finds("pr", "edit", R::kChangeRemoteState, "pr edit changes GitHub"),
      Finds("pr", "", R::kChangeRemoteState, "pr changes GitHub"),
      Finds("issue", "list", R::kNetworkAccess, "issue list reads from GitHub"),
      Finds("issue", "create", R::kWriteExternalTracker,
            "issue create writes to GitHub's issue tracker"),
      Finds("project", "item-list", R::kNetworkAccess, "project item-list reads from GitHub"),
      Finds("label", "create", R::kWriteExternalTracker,
            "label create writes to GitHub's issue tracker"),
      Finds("release", "view", R::kNetworkAccess, "release view reads from GitHub"),
      Finds("release", "download", R::kMutating, "release download writes files"),
      Finds("release", "create", R::kPublishPackage, "release create publishes a release"),
      Finds("repo", "view", R::kNetworkAccess, "repo view reads from GitHub"),
      Finds("repo", "set-default", R::kMutating, "repo set-default changes local files"),
      Finds("repo", "create", R::kChangeRemoteState, "repo create changes GitHub"),
      Example{"api", "repos/o/r/pulls", GhAction::kApi, R::kNetworkAccess,
              "api repos/o/r/pulls reads from GitHub"},
      Finds("run", "watch", R::kNetworkAccess, "run watch reads from GitHub"),
      Finds("run", "download", R::kMutating, "run download writes files"),
      Finds("run", "clone", R::kChangeRemoteState, "run clone changes GitHub"),
      Finds("workflow", "run", R::kChangeRemoteState, "workflow run changes GitHub"),
      Finds("gist", "view", R::kNetworkAccess, "gist view reads from GitHub"),
      Finds("gist", "clone", R::kMutating, "gist clone writes files"),
      Finds("gist", "create", R::kChangeRemoteState, "gist create changes GitHub"),
      Finds("auth", "token", R::kNetworkAccess, "auth token reads from GitHub"),
      Finds("auth", "login", R::kMutating, "auth login changes gh's credentials"),
      Finds("ext", "install", R::kInstallPackage, "ext install installs a gh extension"),
      Finds("extension", "browse", R::kNetworkAccess, "extension browse reads from GitHub"),
      Finds("extensions", "exec", R::kOpaqueProgram, "extensions exec runs an extension"),
      Finds("extension", "remove", R::kMutating, "extension remove changes gh's extensions"),
      Finds("config", "get", R::kReadOnly, "reads its configuration"),
      Finds("alias", "set", R::kMutating, "alias set changes gh's configuration"),
      Finds("frobnicate", "now", R::kUnknownProgram,
            "frobnicate is not a known gh command (an alias or extension would run)"),
      Finds("PR", "create", R::kUnknownProgram,
            "PR is not a known gh command (an alias or extension would run)"),
  };
  return *examples;
}

TEST(GhCommands, EveryExampleDecidesAsWritten) {
  for (const Example& e : Examples()) {
    GhDecision d = DecideGhCommand(e.command, e.verb);
    const std::string line = absl::StrCat(e.command, " ", e.verb);
    EXPECT_EQ(d.action, e.action) << line;
    EXPECT_EQ(d.rule, e.rule) << line << ": " << CommandRuleId(d.rule);
    EXPECT_EQ(d.reason, e.reason) << line;
  }
}

TEST(GhCommands, EveryRowAndEveryCaseHasAnExample) {
  std::set<std::pair<const GhCommand*, int>> decided;
  for (const Example& e : Examples()) {
    GhDecision d = DecideGhCommand(e.command, e.verb);
    decided.emplace(d.row, d.case_index);
  }
  for (const GhCommand& row : GhCommands()) {
    for (int i = -1; i < static_cast<int>(row.cases.size()); ++i) {
      const std::string which = i < 0 ? "otherwise" : absl::StrCat("case ", i);
      EXPECT_TRUE(decided.count({&row, i}) > 0)
          << "no example reaches " << which << " of '" << row.names << "'";
    }
  }
}

TEST(GhCommands, EveryNameIsLowerCaseAndInOneRow) {
  std::set<std::string> seen;
  for (const GhCommand& row : GhCommands()) {
    ASSERT_FALSE(row.names.empty());
    for (absl::string_view name : absl::StrSplit(row.names, ' ', absl::SkipEmpty())) {
      EXPECT_TRUE(seen.emplace(name).second) << name << " is in two rows";
      EXPECT_EQ(name, absl::AsciiStrToLower(name));
      EXPECT_EQ(DecideGhCommand(name, "").row, &row) << name;
    }
    std::set<std::string> verbs;
    for (const GhCase& c : row.cases) {
      EXPECT_FALSE(c.verbs.empty()) << "a case of '" << row.names << "' names no verb";
      for (absl::string_view verb : absl::StrSplit(c.verbs, ' ', absl::SkipEmpty())) {
        EXPECT_TRUE(verbs.emplace(verb).second)
            << verb << " is in two cases of '" << row.names << "'";
      }
      EXPECT_FALSE(c.then.what.empty()) << row.names;
    }
    EXPECT_FALSE(row.otherwise.what.empty()) << row.names;
  }
}

TEST(GhCommands, OnlyApiHandsBackAnAction) {
  for (const GhCommand& row : GhCommands()) {
    const bool api = row.names == "api";
    EXPECT_EQ(row.otherwise.action == GhAction::kApi, api) << row.names;
    for (const GhCase& c : row.cases) EXPECT_EQ(c.then.action, GhAction::kFinding) << row.names;
  }
}

}  // namespace
}  // namespace ccsandbox::policy
