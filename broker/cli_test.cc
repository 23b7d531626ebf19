#include <signal.h>

#include "broker/cli_events.h"
#include "broker/cli_policy.h"
#include "broker/cli_spec.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

TEST(ParseSpecJson, AcceptsTheSpecSpellings) {
  auto spec = ParseSpecJson("s.json", R"({
    "sessionId": "space-1", "mode": "review", "networkEnabled": false,
    "bindMounts": [{"hostPath": "/w", "guestPath": "/w", "readOnly": true}],
    "protectedPaths": ["/repo"], "runnerStateDirs": ["/state"], "egressAllowlist": ["*.x.com"]
  })");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->session_id(), "space-1");
  EXPECT_EQ(spec->mode(), "review");
  EXPECT_TRUE(spec->has_network_enabled());
  EXPECT_FALSE(spec->network_enabled());
  EXPECT_TRUE(spec->bind_mounts(0).read_only());
  EXPECT_EQ(spec->egress_allowlist(0), "*.x.com");
}

TEST(ParseSpecJson, NetworkEnabledUnsetIsDistinguishable) {
  auto spec = ParseSpecJson("s.json", R"({"sessionId": "a"})");
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->has_network_enabled());
}

TEST(ParseSpecJson, RefusesUnknownFieldsAndMalformedJsonNamingTheProblem) {
  auto unknown = ParseSpecJson("s.json", R"({"sesionId": "a"})");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("sesionId"), std::string::npos) << unknown.status();
  EXPECT_NE(unknown.status().message().find("s.json"), std::string::npos);
  EXPECT_EQ(ParseSpecJson("s.json", "{").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSpecJson("s.json", R"({"readOnly": 3})").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ParseSpecJson, QuotesAtMostTheBoundOfAHugeUnknownKey) {
  auto refused = ParseSpecJson("s.json", "{\"" + std::string(1 << 20, 'k') + "\": 1}");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(refused.status().message().size(), 300u) << refused.status().message().substr(0, 300);
}

TEST(LoadSpecFile, MissingFileIsAnError) {
  EXPECT_FALSE(LoadSpecFile("/nonexistent/spec.json").ok());
}

TEST(LoadSpecFile, EndlessOrUnreadableFilesAreRefusedSayingWhy) {
  auto endless = LoadSpecFile("/dev/zero");
  EXPECT_EQ(endless.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(endless.status().message().find("more than 16777216 bytes"), std::string::npos)
      << endless.status();
  auto directory = LoadSpecFile("/");
  EXPECT_EQ(directory.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(directory.status().message().find("Is a directory"), std::string::npos)
      << directory.status();
}

TEST(DefaultSpec, BindsTheWorkdirReadWrite) {
  v1::SandboxSpec spec = DefaultSpec("/w/tree", "cli-1");
  ASSERT_EQ(spec.bind_mounts_size(), 1);
  EXPECT_EQ(spec.bind_mounts(0).host_path(), "/w/tree");
  EXPECT_EQ(spec.bind_mounts(0).guest_path(), "/w/tree");
  EXPECT_FALSE(spec.bind_mounts(0).read_only());
  EXPECT_EQ(spec.guest_workdir(), "/w/tree");
  EXPECT_EQ(spec.session_id(), "cli-1");
}

TEST(ExitCodeFor, MapsTerminalEvents) {
  v1::SandboxEvent e;
  EXPECT_FALSE(ExitCodeFor(e).has_value());
  e.set_stdout("x");
  EXPECT_FALSE(ExitCodeFor(e).has_value());
  e.mutable_exit()->set_exit_code(3);
  EXPECT_EQ(ExitCodeFor(e), 3);
  e.mutable_killed()->set_signal(SIGTERM);
  EXPECT_EQ(ExitCodeFor(e), 128 + SIGTERM);
  e.mutable_killed()->set_signal(0);
  EXPECT_EQ(ExitCodeFor(e), 128 + SIGKILL);
  e.mutable_error()->set_message("boom");
  EXPECT_EQ(ExitCodeFor(e), 125);
}

TEST(StderrNoticeFor, PrintsViolationsAsSpecified) {
  v1::SandboxEvent e;
  e.mutable_violation()->set_action("file-write*");
  e.mutable_violation()->set_target("/etc/x");
  EXPECT_EQ(StderrNoticeFor(e), "sandbox: violation file-write* /etc/x\n");
  e.mutable_violation()->set_count(1);
  EXPECT_EQ(StderrNoticeFor(e), "sandbox: violation file-write* /etc/x\n");
  e.mutable_violation()->set_count(5000);  // a folded storm (macOS)
  EXPECT_EQ(StderrNoticeFor(e), "sandbox: violation file-write* /etc/x (5000 times)\n");
  e.set_stdout("x");
  EXPECT_EQ(StderrNoticeFor(e), "");
}

TEST(EventJson, PrintsExitCodeZero) {
  v1::SandboxEvent e;
  e.mutable_exit()->set_exit_code(0);
  EXPECT_EQ(EventJson(e),
            R"({"sessionId":"","backend":"SANDBOX_BACKEND_UNSPECIFIED","exit":{"exitCode":0}})");
}

TEST(PolicyExitCode, FollowsTheVerdictAndFailsClosedWithoutOne) {
  EXPECT_EQ(PolicyExitCode(v1::POLICY_VERDICT_ALLOW), 0);
  EXPECT_EQ(PolicyExitCode(v1::POLICY_VERDICT_PROMPT), 1);
  EXPECT_EQ(PolicyExitCode(v1::POLICY_VERDICT_DENY), 2);
  EXPECT_EQ(PolicyExitCode(v1::POLICY_VERDICT_UNSPECIFIED), 125);
}

TEST(CommandLineFromWords, JoinsWithSpaces) {
  EXPECT_EQ(CommandLineFromWords({"git commit -m 'x y' && npm i"}), "git commit -m 'x y' && npm i");
  EXPECT_EQ(CommandLineFromWords({"git", "push", "origin", "main"}), "git push origin main");
  EXPECT_EQ(CommandLineFromWords({}), "");
}

TEST(FormatCommandDecision, PrintsRuleSubcommandReasonAndFindings) {
  v1::CommandDecision d;
  d.set_verdict(v1::POLICY_VERDICT_DENY);
  d.set_rule("install_package");
  d.set_rule_name("install a package");
  d.set_subcommand("npm i");
  d.set_reason("installs packages");
  d.set_fully_analysed(true);
  v1::CommandFinding* commit = d.add_findings();
  commit->set_verdict(v1::POLICY_VERDICT_DENY);
  commit->set_rule("create_commit");
  commit->set_subcommand("git commit -m x");
  v1::CommandFinding* install = d.add_findings();
  install->set_verdict(v1::POLICY_VERDICT_DENY);
  install->set_rule("install_package");
  install->set_subcommand("npm i");
  EXPECT_EQ(FormatCommandDecision(d),
            "verdict: deny\n"
            "rule: install_package (install a package)\n"
            "subcommand: npm i\n"
            "reason: installs packages\n"
            "findings:\n"
            "  deny create_commit: git commit -m x\n"
            "  deny install_package: npm i\n");

  v1::CommandDecision dynamic;
  dynamic.set_verdict(v1::POLICY_VERDICT_PROMPT);
  dynamic.set_rule("dynamic_code");
  dynamic.set_rule_name("run code the policy cannot see");
  dynamic.set_reason("eval of a variable");
  dynamic.add_findings()->set_rule("dynamic_code");
  EXPECT_EQ(FormatCommandDecision(dynamic),
            "verdict: prompt\n"
            "rule: dynamic_code (run code the policy cannot see)\n"
            "reason: eval of a variable\n"
            "not fully analysed: part of the line runs code the policy cannot see\n");
}

TEST(CommandDecisionJson, IsOneLineWithEveryField) {
  v1::CommandDecision d;
  d.set_verdict(v1::POLICY_VERDICT_ALLOW);
  d.set_rule("read_only");
  const std::string json = CommandDecisionJson(d);
  EXPECT_EQ(json.find('\n'), std::string::npos);
  EXPECT_NE(json.find(R"("verdict":"POLICY_VERDICT_ALLOW")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("fullyAnalysed":false)"), std::string::npos) << json;
}

}  // namespace
}  // namespace ccsandbox::broker
