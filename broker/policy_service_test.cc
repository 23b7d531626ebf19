// The SandboxPolicy service over an in-process gRPC channel: command decisions per mode, the
// guardrails' fail-closed and branch-scoped rules, path confinement over a real temp tree, and
// bad requests refused as INVALID_ARGUMENT naming the field.
#include "broker/policy_service.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/policy.grpc.pb.h"

namespace ccsandbox::broker {
namespace {

class PolicyServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::SandboxPolicy::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override { server_->Shutdown(); }

  grpc::Status Evaluate(const std::string& mode, const std::string& line,
                        v1::CommandDecision* decision) {
    grpc::ClientContext ctx;
    v1::EvaluateCommandRequest request;
    request.set_mode(mode);
    request.set_command_line(line);
    return stub_->EvaluateCommand(&ctx, request, decision);
  }

  grpc::Status Resolve(const v1::ResolveActionRequest& request, v1::GuardrailDecision* decision) {
    grpc::ClientContext ctx;
    return stub_->ResolveAction(&ctx, request, decision);
  }

  grpc::Status Confine(const v1::ConfinePathRequest& request, v1::ConfinedPath* confined) {
    grpc::ClientContext ctx;
    return stub_->ConfinePath(&ctx, request, confined);
  }

  PolicyService service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::SandboxPolicy::Stub> stub_;
};

struct CommandCase {
  const char* mode;
  const char* line;
  v1::PolicyVerdict verdict;
  const char* rule;
  const char* subcommand;
};

TEST_F(PolicyServiceTest, EvaluateCommandDecidesPerMode) {
  const CommandCase cases[] = {
      {"chat", "git status", v1::POLICY_VERDICT_ALLOW, "read_only", "git status"},
      {"", "git commit -m x", v1::POLICY_VERDICT_ALLOW, "create_commit", "git commit -m x"},
      {"chat", "git add . && git push origin main", v1::POLICY_VERDICT_PROMPT, "push_to_remote",
       "git push origin main"},
      {"chat", "npm i left-pad", v1::POLICY_VERDICT_PROMPT, "install_package", "npm i left-pad"},
      {"chat", "ls; sudo rm -rf /", v1::POLICY_VERDICT_DENY, "system_destruction", ""},
      {"plan", "ls -la | grep foo", v1::POLICY_VERDICT_ALLOW, "read_only", ""},
      {"plan", "git status && git commit -m x", v1::POLICY_VERDICT_DENY, "create_commit",
       "git commit -m x"},
      {"review", "echo hi > notes.txt", v1::POLICY_VERDICT_DENY, "mutating", ""},
      {"orchestrate", "git push", v1::POLICY_VERDICT_DENY, "push_to_remote", "git push"},
      {"plan", "echo 'unterminated", v1::POLICY_VERDICT_DENY, "unparseable", ""},
  };
  for (const CommandCase& c : cases) {
    SCOPED_TRACE(std::string(c.mode) + ": " + c.line);
    v1::CommandDecision d;
    grpc::Status status = Evaluate(c.mode, c.line, &d);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(d.verdict(), c.verdict);
    EXPECT_EQ(d.rule(), c.rule);
    EXPECT_FALSE(d.rule_name().empty());
    EXPECT_FALSE(d.reason().empty());
    if (*c.subcommand != '\0') {
      EXPECT_EQ(d.subcommand(), c.subcommand);
    }
    EXPECT_EQ(d.mode(), *c.mode == '\0' ? "chat" : c.mode);
  }
}

TEST_F(PolicyServiceTest, EvaluateCommandReportsEveryFindingWithItsVerdict) {
  v1::CommandDecision d;
  ASSERT_TRUE(Evaluate("plan", "git commit -m x && npm i", &d).ok());
  EXPECT_EQ(d.verdict(), v1::POLICY_VERDICT_DENY);
  EXPECT_TRUE(d.fully_analysed());
  ASSERT_EQ(d.findings_size(), 2);
  EXPECT_EQ(d.findings(0).rule(), "create_commit");
  EXPECT_EQ(d.findings(0).subcommand(), "git commit -m x");
  EXPECT_EQ(d.findings(0).verdict(), v1::POLICY_VERDICT_DENY);
  EXPECT_EQ(d.findings(1).rule(), "install_package");
  EXPECT_EQ(d.findings(1).verdict(), v1::POLICY_VERDICT_DENY);

  v1::CommandDecision chat;
  ASSERT_TRUE(Evaluate("chat", "git status; git push origin main:release", &chat).ok());
  ASSERT_EQ(chat.findings_size(), 2);
  EXPECT_EQ(chat.findings(0).verdict(), v1::POLICY_VERDICT_ALLOW);
  EXPECT_EQ(chat.findings(1).verdict(), v1::POLICY_VERDICT_PROMPT);
  ASSERT_EQ(chat.findings(1).push_refs_size(), 1);
  EXPECT_EQ(chat.findings(1).push_refs(0), "release");
}

TEST_F(PolicyServiceTest, CodeThePolicyCannotSeeIsNotFullyAnalysed) {
  v1::CommandDecision chat;
  ASSERT_TRUE(Evaluate("chat", "eval \"$CMD\"", &chat).ok());
  EXPECT_EQ(chat.verdict(), v1::POLICY_VERDICT_PROMPT);
  EXPECT_EQ(chat.rule(), "dynamic_code");
  EXPECT_FALSE(chat.fully_analysed());

  v1::CommandDecision plan;
  ASSERT_TRUE(Evaluate("plan", "sh ./build.sh", &plan).ok());
  EXPECT_EQ(plan.verdict(), v1::POLICY_VERDICT_DENY);
  EXPECT_FALSE(plan.fully_analysed());
}

TEST_F(PolicyServiceTest, EvaluateCommandRefusesAnUnknownMode) {
  v1::CommandDecision d;
  grpc::Status status = Evaluate("yolo", "ls", &d);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "mode: ")) << status.error_message();
}

v1::ResolveActionRequest PushRules() {
  v1::ResolveActionRequest request;
  request.add_rules("allow push_to_remote");
  request.add_rules("deny push_to_remote main");
  request.add_rules("prompt install_package");
  return request;
}

TEST_F(PolicyServiceTest, BranchScopedPushRules) {
  v1::ResolveActionRequest feature = PushRules();
  v1::EffectRequest* push = feature.add_effects();
  push->set_effect("push_to_remote");
  push->add_refs("feature/x");
  v1::GuardrailDecision allowed;
  ASSERT_TRUE(Resolve(feature, &allowed).ok());
  EXPECT_EQ(allowed.verdict(), v1::POLICY_VERDICT_ALLOW);
  EXPECT_EQ(allowed.decided_by().ref(), "refs/heads/feature/x");
  EXPECT_EQ(allowed.decided_by().rule_index(), 0);

  v1::ResolveActionRequest main = PushRules();
  push = main.add_effects();
  push->set_effect("push_to_remote");
  push->add_refs("feature/x");
  push->add_refs("main");
  v1::GuardrailDecision denied;
  ASSERT_TRUE(Resolve(main, &denied).ok());
  EXPECT_EQ(denied.verdict(), v1::POLICY_VERDICT_DENY);
  EXPECT_FALSE(denied.denied_for_no_approver());
  ASSERT_TRUE(denied.has_decided_by());
  EXPECT_EQ(denied.decided_by().effect(), "push_to_remote");
  EXPECT_EQ(denied.decided_by().ref(), "refs/heads/main");
  EXPECT_EQ(denied.decided_by().rule_index(), 1);
  EXPECT_EQ(denied.decided_by().rule(), "deny push_to_remote main");
  ASSERT_EQ(denied.resolutions_size(), 2);
  EXPECT_EQ(denied.resolutions(0).verdict(), v1::POLICY_VERDICT_ALLOW);

  // A push to the current branch ("" ref) is scoped by current_branch.
  v1::ResolveActionRequest current = PushRules();
  current.add_effects()->set_effect("push_to_remote");
  current.set_current_branch("main");
  v1::GuardrailDecision on_main;
  ASSERT_TRUE(Resolve(current, &on_main).ok());
  EXPECT_EQ(on_main.verdict(), v1::POLICY_VERDICT_DENY);
  EXPECT_EQ(on_main.decided_by().ref(), "refs/heads/main");
}

TEST_F(PolicyServiceTest, APromptWithNoApproverIsDenied) {
  v1::ResolveActionRequest request = PushRules();
  request.add_effects()->set_effect("install_package");
  v1::GuardrailDecision nobody;
  ASSERT_TRUE(Resolve(request, &nobody).ok());
  EXPECT_EQ(nobody.verdict(), v1::POLICY_VERDICT_DENY);
  EXPECT_EQ(nobody.rule_verdict(), v1::POLICY_VERDICT_PROMPT);
  EXPECT_TRUE(nobody.denied_for_no_approver());
  EXPECT_TRUE(absl::StrContains(nobody.reason(), "no approver")) << nobody.reason();

  request.set_approver_connected(true);
  v1::GuardrailDecision asked;
  ASSERT_TRUE(Resolve(request, &asked).ok());
  EXPECT_EQ(asked.verdict(), v1::POLICY_VERDICT_PROMPT);
  EXPECT_FALSE(asked.denied_for_no_approver());
}

TEST_F(PolicyServiceTest, TheDefaultVerdictDecidesUnmentionedEffects) {
  v1::ResolveActionRequest request;
  request.add_effects()->set_effect("delete_files");
  request.set_approver_connected(true);
  v1::GuardrailDecision unspecified;
  ASSERT_TRUE(Resolve(request, &unspecified).ok());
  EXPECT_EQ(unspecified.verdict(), v1::POLICY_VERDICT_PROMPT);  // UNSPECIFIED = prompt
  EXPECT_FALSE(unspecified.decided_by().has_rule_index());

  request.set_default_verdict(v1::POLICY_VERDICT_DENY);
  v1::GuardrailDecision denied;
  ASSERT_TRUE(Resolve(request, &denied).ok());
  EXPECT_EQ(denied.verdict(), v1::POLICY_VERDICT_DENY);

  v1::ResolveActionRequest nothing;
  v1::GuardrailDecision allowed;
  ASSERT_TRUE(Resolve(nothing, &allowed).ok());
  EXPECT_EQ(allowed.verdict(), v1::POLICY_VERDICT_ALLOW);
  EXPECT_FALSE(allowed.has_decided_by());
}

TEST_F(PolicyServiceTest, ResolveActionRefusesBadRequestsNamingTheField) {
  struct BadCase {
    v1::ResolveActionRequest request;
    const char* field;
  };
  std::vector<BadCase> cases(5);
  cases[0].request.add_effects()->set_effect("push");
  cases[0].field = "effects[0].effect: ";
  cases[1].request.add_rules("allow create_commit");
  cases[1].request.add_rules("maybe push_to_remote");
  cases[1].field = "rules[1]: ";
  cases[2].request.add_rules("deny install_package main");
  cases[2].field = "rules[0]: ";
  v1::EffectRequest* e = cases[3].request.add_effects();
  e->set_effect("install_package");
  e->add_refs("main");
  cases[3].field = "effects[0].refs: ";
  cases[4].request.set_default_verdict(static_cast<v1::PolicyVerdict>(42));
  cases[4].field = "defaultVerdict: ";
  for (const BadCase& c : cases) {
    v1::GuardrailDecision d;
    grpc::Status status = Resolve(c.request, &d);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.field;
    EXPECT_TRUE(absl::StartsWith(status.error_message(), c.field)) << status.error_message();
  }
}

// A real tree: work/ (the workdir, writable), attach/ (read-only), outside/ (no root), and
// work/escape -> ../outside, a symlink inside the worktree that leads out of it.
class ConfinePathTest : public PolicyServiceTest {
 protected:
  void SetUp() override {
    PolicyServiceTest::SetUp();
    const char* tmp = getenv("TEST_TMPDIR");
    std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/confine.XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    char real[PATH_MAX];
    ASSERT_NE(realpath(templ.c_str(), real), nullptr);
    base_ = real;
    std::filesystem::create_directories(base_ + "/work/src");
    std::filesystem::create_directories(base_ + "/attach");
    std::filesystem::create_directories(base_ + "/outside");
    std::ofstream(base_ + "/work/src/a.txt") << "a";
    std::ofstream(base_ + "/attach/doc.md") << "doc";
    std::ofstream(base_ + "/outside/secret") << "secret";
    std::filesystem::create_directory_symlink("../outside", base_ + "/work/escape");
    std::filesystem::create_directory_symlink("src", base_ + "/work/inner");
  }
  void TearDown() override {
    if (!base_.empty()) std::filesystem::remove_all(base_);
    PolicyServiceTest::TearDown();
  }

  v1::ConfinePathRequest Request(const std::string& path, v1::PathIntent intent) {
    v1::ConfinePathRequest request;
    v1::ConfinementRoot* work = request.add_roots();
    work->set_path(base_ + "/work");
    work->set_writable(true);
    request.add_roots()->set_path(base_ + "/attach");
    request.set_workdir(base_ + "/work");
    request.set_path(path);
    request.set_intent(intent);
    return request;
  }

  std::string base_;
};

TEST_F(ConfinePathTest, ResolvesInsideTheRoots) {
  v1::ConfinedPath p;
  grpc::Status status = Confine(Request("inner/a.txt", v1::PATH_INTENT_READ), &p);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(p.root_index(), 0u);
  EXPECT_EQ(p.root(), base_ + "/work");
  EXPECT_EQ(p.relative(), "src/a.txt");
  EXPECT_EQ(p.resolved(), base_ + "/work/src/a.txt");
  EXPECT_TRUE(p.exists());

  v1::ConfinedPath doc;
  status = Confine(Request(base_ + "/attach/doc.md", v1::PATH_INTENT_READ), &doc);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(doc.root_index(), 1u);
  EXPECT_EQ(doc.relative(), "doc.md");
}

TEST_F(ConfinePathTest, WritesMayNameNewNestedPaths) {
  v1::ConfinedPath p;
  grpc::Status status = Confine(Request("src/new/deeper/file.txt", v1::PATH_INTENT_WRITE), &p);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(p.root_index(), 0u);
  EXPECT_EQ(p.relative(), "src/new/deeper/file.txt");
  EXPECT_FALSE(p.exists());
}

TEST_F(ConfinePathTest, RefusalsKeepTheirCodes) {
  struct RefusedCase {
    std::string path;
    v1::PathIntent intent;
    grpc::StatusCode code;
  };
  const RefusedCase cases[] = {
      {"escape/secret", v1::PATH_INTENT_READ, grpc::StatusCode::PERMISSION_DENIED},
      {"escape/new.txt", v1::PATH_INTENT_WRITE, grpc::StatusCode::PERMISSION_DENIED},
      {"../outside/secret", v1::PATH_INTENT_READ, grpc::StatusCode::PERMISSION_DENIED},
      {"/etc/passwd", v1::PATH_INTENT_READ, grpc::StatusCode::PERMISSION_DENIED},
      {base_ + "/attach/new.md", v1::PATH_INTENT_WRITE, grpc::StatusCode::PERMISSION_DENIED},
      {"src/missing.txt", v1::PATH_INTENT_READ, grpc::StatusCode::NOT_FOUND},
      {"src/a.txt/below", v1::PATH_INTENT_WRITE, grpc::StatusCode::FAILED_PRECONDITION},
  };
  for (const RefusedCase& c : cases) {
    v1::ConfinedPath p;
    grpc::Status status = Confine(Request(c.path, c.intent), &p);
    EXPECT_EQ(status.error_code(), c.code) << c.path << ": " << status.error_message();
  }
  // The symlink still points outside: nothing was created through it.
  EXPECT_FALSE(std::filesystem::exists(base_ + "/outside/new.txt"));
}

TEST_F(ConfinePathTest, BadRequestsNameTheField) {
  v1::ConfinePathRequest no_roots = Request("src/a.txt", v1::PATH_INTENT_READ);
  no_roots.clear_roots();
  v1::ConfinePathRequest relative_workdir = Request("src/a.txt", v1::PATH_INTENT_READ);
  relative_workdir.set_workdir("work");
  v1::ConfinePathRequest relative_root = Request("src/a.txt", v1::PATH_INTENT_READ);
  relative_root.mutable_roots(1)->set_path("attach");
  v1::ConfinePathRequest nul = Request(std::string("src/a\0b", 7), v1::PATH_INTENT_READ);
  const std::pair<v1::ConfinePathRequest, const char*> cases[] = {
      {Request("", v1::PATH_INTENT_READ), "path: "},
      {nul, "path: "},
      {Request("src/a.txt", v1::PATH_INTENT_UNSPECIFIED), "intent: "},
      {no_roots, "roots: "},
      {relative_workdir, "workdir: "},
      {relative_root, "roots[1]: "},
  };
  for (const auto& [request, field] : cases) {
    v1::ConfinedPath p;
    grpc::Status status = Confine(request, &p);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << field;
    EXPECT_TRUE(absl::StartsWith(status.error_message(), field)) << status.error_message();
  }
}

}  // namespace
}  // namespace ccsandbox::broker
