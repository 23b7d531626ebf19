#include "policy/command/command_policy.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

using R = CommandRule;
using V = PolicyVerdict;

TEST(CommandRuleVerdict, MatchesTheHeaderTable) {
  struct Row {
    R rule;
    V chat;
    V read_only;
  };
  const std::vector<Row> table = {
      {R::kUnparseable, V::kDeny, V::kDeny},
      {R::kSystemDestruction, V::kDeny, V::kDeny},
      {R::kContainerEscape, V::kDeny, V::kDeny},
      {R::kPrivilegeEscalation, V::kDeny, V::kDeny},
      {R::kPushToRemote, V::kPrompt, V::kDeny},
      {R::kPublishPackage, V::kPrompt, V::kDeny},
      {R::kOpenPullRequest, V::kPrompt, V::kDeny},
      {R::kPublishReviewOrMerge, V::kPrompt, V::kDeny},
      {R::kWriteExternalTracker, V::kPrompt, V::kDeny},
      {R::kChangeRemoteState, V::kPrompt, V::kDeny},
      {R::kInstallPackage, V::kPrompt, V::kDeny},
      {R::kDynamicCode, V::kPrompt, V::kDeny},
      {R::kCreateCommit, V::kAllow, V::kDeny},
      {R::kNetworkWrite, V::kPrompt, V::kDeny},
      {R::kMutating, V::kAllow, V::kDeny},
      {R::kOpaqueProgram, V::kAllow, V::kDeny},
      {R::kUnknownProgram, V::kAllow, V::kDeny},
      {R::kNetworkAccess, V::kAllow, V::kAllow},
      {R::kReadOnly, V::kAllow, V::kAllow},
  };
  ASSERT_EQ(table.size(), static_cast<size_t>(kCommandRuleCount));
  for (size_t i = 0; i < table.size(); ++i) {
    const Row& row = table[i];
    EXPECT_EQ(static_cast<size_t>(row.rule), i) << "rows in rule.h's order";
    for (Mode m : kAllModes) {
      EXPECT_EQ(CommandRuleVerdict(m, row.rule), ModeIsReadOnly(m) ? row.read_only : row.chat)
          << CommandRuleId(row.rule) << " in " << ModeName(m);
    }
  }
}

TEST(EvaluateCommand, MostRestrictiveSubcommandDecides) {
  CommandDecision d = EvaluateCommand(Mode::kChat, "git status && git push origin main; ls");
  EXPECT_EQ(d.verdict, V::kPrompt);
  EXPECT_EQ(d.rule, R::kPushToRemote);
  EXPECT_EQ(d.subcommand, "git push origin main");
  EXPECT_TRUE(d.fully_analysed);
  EXPECT_EQ(d.findings.size(), 3u);
  EXPECT_NE(d.reason.find("push to remote repository"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("chat mode"), std::string::npos) << d.reason;

  d = EvaluateCommand(Mode::kChat, "npm install && sudo make install");
  EXPECT_EQ(d.verdict, V::kDeny);
  EXPECT_EQ(d.rule, R::kPrivilegeEscalation);
  EXPECT_EQ(d.subcommand, "sudo make install");
}

TEST(EvaluateCommand, AmongEqualVerdictsTheHigherPriorityRuleNamesTheDecision) {
  // Both are denied in plan mode; install_package comes first in rule.h.
  CommandDecision d = EvaluateCommand(Mode::kPlan, "git commit -m x && npm install");
  EXPECT_EQ(d.verdict, V::kDeny);
  EXPECT_EQ(d.rule, R::kInstallPackage);
  EXPECT_EQ(d.subcommand, "npm install");
}

TEST(EvaluateCommand, ReadOnlyModesRefuseMutationWithoutAsking) {
  for (Mode m : {Mode::kReview, Mode::kPlan, Mode::kOrchestrate}) {
    for (const char* line : {"git commit -m x", "git push", "npm install", "docker ps",
                             "echo x > f", "rm f", "sed -i s/a/b/ f", "tee f", "mkdir d"}) {
      CommandDecision d = EvaluateCommand(m, line);
      EXPECT_EQ(d.verdict, V::kDeny) << line << " in " << ModeName(m) << ": " << d.reason;
    }
    for (const char* line : {"ls -la", "git log", "cat f | grep x", "echo x > /dev/null"}) {
      EXPECT_EQ(EvaluateCommand(m, line).verdict, V::kAllow) << line;
    }
  }
}

TEST(EvaluateCommand, UnparseableIsDeniedEverywhereWithAReason) {
  for (Mode m : {Mode::kChat, Mode::kReview, Mode::kPlan, Mode::kOrchestrate}) {
    CommandDecision d = EvaluateCommand(m, "echo 'oops");
    EXPECT_EQ(d.verdict, V::kDeny);
    EXPECT_EQ(d.rule, R::kUnparseable);
    EXPECT_FALSE(d.fully_analysed);
    EXPECT_NE(d.reason.find("unterminated single quote"), std::string::npos) << d.reason;
  }
  CommandDecision d = EvaluateCommand(Mode::kChat, "bash -c 'echo \"oops'");
  EXPECT_EQ(d.verdict, V::kDeny);
  EXPECT_EQ(d.rule, R::kUnparseable);
  EXPECT_NE(d.reason.find("bash -c"), std::string::npos) << d.reason;
}

TEST(EvaluateCommand, OversizedAndDeepInputFailsClosed) {
  ShellParseLimits limits;
  limits.max_input_bytes = 100;
  CommandDecision d = EvaluateCommand(Mode::kChat, "echo " + std::string(200, 'a'), limits);
  EXPECT_EQ(d.verdict, V::kDeny);
  EXPECT_EQ(d.rule, R::kUnparseable);
  EXPECT_NE(d.reason.find("too large"), std::string::npos) << d.reason;

  // bash -c 'bash -c …', one level deeper than the limit allows.
  limits = ShellParseLimits();
  limits.max_nesting = 3;
  std::string nested = "ls";
  for (int i = 0; i < 5; ++i) {
    std::string quoted;
    for (char c : nested) {
      if (c == '\'') {
        quoted += "'\\''";
      } else {
        quoted += c;
      }
    }
    nested = "bash -c '" + quoted + "'";
  }
  d = EvaluateCommand(Mode::kChat, nested, limits);
  EXPECT_EQ(d.verdict, V::kDeny) << d.reason;
  EXPECT_EQ(d.rule, R::kUnparseable);
}

TEST(EvaluateCommand, CouldNotBeFullyAnalysed) {
  CommandDecision d = EvaluateCommand(Mode::kChat, "eval \"$X\"");
  EXPECT_EQ(d.verdict, V::kPrompt);
  EXPECT_EQ(d.rule, R::kDynamicCode);
  EXPECT_FALSE(d.fully_analysed);
  EXPECT_NE(d.reason.find("could not be fully analysed"), std::string::npos);

  d = EvaluateCommand(Mode::kChat, "python3 build.py");
  EXPECT_EQ(d.verdict, V::kAllow);
  EXPECT_FALSE(d.fully_analysed);
  EXPECT_EQ(EvaluateCommand(Mode::kPlan, "python3 build.py").verdict, V::kDeny);

  // A script somewhere in the line taints the whole decision, even if it does not decide.
  d = EvaluateCommand(Mode::kChat, "./build.sh && git push");
  EXPECT_EQ(d.rule, R::kPushToRemote);
  EXPECT_FALSE(d.fully_analysed);
}

TEST(EvaluateCommand, EmptyLineRunsNothing) {
  for (const char* line : {"", "   ", "# just a comment"}) {
    CommandDecision d = EvaluateCommand(Mode::kPlan, line);
    EXPECT_EQ(d.verdict, V::kAllow);
    EXPECT_TRUE(d.findings.empty());
    EXPECT_TRUE(d.fully_analysed);
  }
}

TEST(EvaluateCommand, InnerCommandOfBashCIsTheSubcommand) {
  CommandDecision d = EvaluateCommand(Mode::kChat, "bash -c 'ls; git push origin main'");
  EXPECT_EQ(d.subcommand, "git push origin main");
  EXPECT_NE(d.reason.find("inside bash -c"), std::string::npos) << d.reason;
}

}  // namespace
}  // namespace ccsandbox::policy
