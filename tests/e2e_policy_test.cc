// `sandboxctl policy check` against the real broker: what each mode decides for a command line,
// the exit codes (0 allow, 1 prompt, 2 deny, 125 tool errors), --json, and a broker log that
// stays quiet about ordinary decisions.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {
namespace {

class PolicyCheck : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto started = Daemons::Start();
    ASSERT_TRUE(started.ok()) << started.status();
    daemons_ = std::move(*started).release();
  }
  static void TearDownTestSuite() {
    delete daemons_;
    daemons_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(daemons_, nullptr); }

  static ProgramResult Check(const std::string& mode, const std::vector<std::string>& words,
                             bool json = false) {
    std::vector<std::string> args = {"policy", "check", "--mode=" + mode};
    if (json) args.push_back("--json");
    args.push_back("--");
    args.insert(args.end(), words.begin(), words.end());
    return daemons_->Sandboxctl(args);
  }

  static Daemons* daemons_;
};

Daemons* PolicyCheck::daemons_ = nullptr;

TEST_F(PolicyCheck, AllowExitsZero) {
  ProgramResult r = Check("plan", {"git status && git log --oneline | head -5"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, "verdict: allow\nrule: read_only (")) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(PolicyCheck, PromptExitsOne) {
  ProgramResult r = Check("chat", {"git add -A && git push origin main"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, "verdict: prompt\nrule: push_to_remote (")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "\nsubcommand: git push origin main\n")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "\nreason: ")) << r.out;
}

TEST_F(PolicyCheck, DenyExitsTwoAndNamesTheDecidingSubcommand) {
  ProgramResult r = Check("plan", {"git commit -m x && npm i"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, "verdict: deny\n")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out,
                                "\nfindings:\n  deny create_commit: git commit -m x\n"
                                "  deny install_package: npm i\n"))
      << r.out;
  EXPECT_FALSE(absl::StrContains(r.out, "not fully analysed")) << r.out;

  // Several words after -- are one command line, joined with spaces.
  ProgramResult words = Check("chat", {"sudo", "rm", "-rf", "/"});
  EXPECT_EQ(words.exit_code, 2) << words.out << words.err;
  EXPECT_TRUE(absl::StrContains(words.out, "subcommand: sudo rm -rf /\n")) << words.out;
}

TEST_F(PolicyCheck, SaysWhenTheLineIsNotFullyAnalysed) {
  ProgramResult chat = Check("chat", {"eval \"$CMD\""});
  EXPECT_EQ(chat.exit_code, 1) << chat.out << chat.err;
  EXPECT_TRUE(absl::StrContains(chat.out, "rule: dynamic_code (")) << chat.out;
  EXPECT_TRUE(absl::StrContains(chat.out, "\nnot fully analysed: ")) << chat.out;

  ProgramResult review = Check("review", {"bash ./deploy.sh"});
  EXPECT_EQ(review.exit_code, 2) << review.out << review.err;
  EXPECT_TRUE(absl::StrContains(review.out, "\nnot fully analysed: ")) << review.out;
}

TEST_F(PolicyCheck, JsonPrintsTheDecisionOnOneLine) {
  ProgramResult r = Check("orchestrate", {"git push origin main"}, /*json=*/true);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  ASSERT_TRUE(absl::EndsWith(r.out, "}\n")) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, R"("verdict":"POLICY_VERDICT_DENY")")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, R"("rule":"push_to_remote")")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, R"("fullyAnalysed":true)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, R"("mode":"orchestrate")")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, R"("pushRefs":["main"])")) << r.out;
}

TEST_F(PolicyCheck, ToolErrorsExit125WithOneLine) {
  ProgramResult bad_mode = Check("yolo", {"ls"});
  EXPECT_EQ(bad_mode.exit_code, 125);
  EXPECT_EQ(bad_mode.out, "");
  EXPECT_TRUE(absl::StrContains(bad_mode.err, "mode: unknown mode 'yolo'")) << bad_mode.err;

  ProgramResult no_mode = daemons_->Sandboxctl({"policy", "check", "--", "ls"});
  EXPECT_EQ(no_mode.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(no_mode.err, "--mode is required")) << no_mode.err;

  ProgramResult no_line = daemons_->Sandboxctl({"policy", "check", "--mode=plan"});
  EXPECT_EQ(no_line.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(no_line.err, "no command line given")) << no_line.err;

  ProgramResult no_verb = daemons_->Sandboxctl({"policy", "--mode=plan", "--", "ls"});
  EXPECT_EQ(no_verb.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(no_verb.err, "policy: expected 'check'")) << no_verb.err;

  ProgramResult no_broker =
      RunProgram({Runfile("broker/sandboxctl"), "--broker=unix:" + daemons_->dir() + "/nope.sock",
                  "policy", "check", "--mode=plan", "--", "ls"});
  EXPECT_EQ(no_broker.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(no_broker.err, "no broker at")) << no_broker.err;
}

TEST_F(PolicyCheck, TheBrokerLogsNoLinePerDecision) {
  ProgramResult r = Check("plan", {"echo policy-log-marker > f"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_FALSE(absl::StrContains(daemons_->BrokerLog(), "policy-log-marker"))
      << daemons_->BrokerLog();
}

}  // namespace
}  // namespace ccsandbox::testing
