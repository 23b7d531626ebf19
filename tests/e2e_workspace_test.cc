// Conversations' copy-on-write worktrees through the real daemons, on a real XFS (reflink=1)
// volume made by the test: the broker provisions a conversation (a reflink clone of the
// registered checkout, a working and a config directory per agent), overlay dispatch binds
// exactly the agent's four paths, harness bash only the run's working directory, a sibling
// agent's directory and the registered checkout stay out of reach, ConfinePath agrees with the
// binds, and teardown waits for the sessions. Broker as root and as the unprivileged user.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/policy.grpc.pb.h"
#include "proto/sandbox.grpc.pb.h"
#include "proto/workspace.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"
#include "tests/skip_or_fail_in_ci.h"
#include "tests/workspace_fixture.h"

namespace ccsandbox::testing {
namespace {

namespace fs = std::filesystem;

class WorkspaceTest : public WorkspaceFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(SetUpWorkspace());
    grpc::Status registered = Register({{"app", repo_}, {"lib", lib_}}, attachments_);
    ASSERT_TRUE(registered.ok()) << registered.error_message();
    grpc::Status provisioned = Provision("c", {"a1", "a2"}, &conversation_);
    ASSERT_TRUE(provisioned.ok()) << provisioned.error_message() << "\n" << d_->BrokerLog();
    conv_ = conversation_.path();
    ASSERT_EQ(conv_, data_ + "/workspaces/w/conversations/c");
    std::ofstream(conv_ + "/agents/a2/work/secret") << "a2's notes\n";
  }

  grpc::Status Teardown(const std::string& agent, v1::TeardownResponse* out) {
    return WorkspaceFixture::Teardown("c", agent, out);
  }

  std::string conv_;
  v1::Conversation conversation_;
};

TEST_P(WorkspaceTest, OverlayDispatchBindsTheAgentsFourPathsAndNothingElse) {
  v1::SandboxHandle handle;
  grpc::Status launched = Launch("s1", Overlay("a1"), &handle);
  ASSERT_TRUE(launched.ok()) << launched.error_message() << "\n" << d_->BrokerLog();
  const std::string script = absl::StrCat(
      "cd ", conv_, "/agents/a1/work && pwd && echo mine > mine && echo work-rw; ",
      "(echo x > ../config/f) 2>/dev/null && echo CONFIG-WRITABLE || echo config-ro; ",
      "echo edit >> ", conv_, "/repos/app/README && echo repos-rw; ", "cat ", conv_,
      "/agents/a2/work/secret 2>/dev/null && echo SIBLING-VISIBLE || ", "echo sibling-hidden; ",
      "echo agents: $(ls ", conv_, "/agents); ", "cat ", attachments_, "/brief.txt; ", "(echo z > ",
      attachments_, "/new) 2>/dev/null && echo ATTACHMENTS-WRITABLE || ", "echo attachments-ro; ",
      "test -e ", repo_, " && echo REGISTERED-VISIBLE || echo registered-hidden; ", "test -e ",
      data_, "/workspaces/w/workspace.json && echo REGISTRY-VISIBLE || ", "echo registry-hidden; ",
      "cd ", conv_, "/repos/app && git -c user.email=t@t -c user.name=t commit -qam edit && ",
      "echo commits: $(git log --oneline | wc -l) && git status --porcelain && echo git-ok");
  int exit = -1;
  const std::string out = Sh("s1", script, &exit);
  EXPECT_TRUE(absl::StrContains(out, conv_ + "/agents/a1/work\nwork-rw\n")) << out;
  EXPECT_TRUE(absl::StrContains(out, "config-ro")) << out;
  EXPECT_TRUE(absl::StrContains(out, "repos-rw")) << out;
  EXPECT_TRUE(absl::StrContains(out, "sibling-hidden")) << out;
  EXPECT_TRUE(absl::StrContains(out, "agents: a1\n")) << out;
  EXPECT_TRUE(absl::StrContains(out, "the brief\nattachments-ro")) << out;
  EXPECT_TRUE(absl::StrContains(out, "registered-hidden")) << out;
  EXPECT_TRUE(absl::StrContains(out, "registry-hidden")) << out;
  EXPECT_TRUE(absl::StrContains(out, "commits: 2\ngit-ok")) << out;
  EXPECT_EQ(exit, 0) << out;
  // On the host: the agent's file, the clone's commit; the registered checkout as it was.
  EXPECT_EQ(ReadFile(conv_ + "/agents/a1/work/mine"), "mine\n");
  EXPECT_EQ(ReadFile(repo_ + "/README"), "original\n");
  // (As root on what may be the test user's checkout: git wants it declared safe.)
  ProgramResult status =
      RunProgram({"git", "-c", "safe.directory=*", "-C", repo_, "status", "--porcelain"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(status.out, "");
  ProgramResult log =
      RunProgram({"git", "-c", "safe.directory=*", "-C", repo_, "log", "--oneline"});
  EXPECT_EQ(log.exit_code, 0) << log.err;
  EXPECT_EQ(CountOf(log.out, "\n"), 1) << log.out;
  // The sibling a2 shares the conversation's repos/ (a1's commit is there) and not a1's work/.
  ASSERT_TRUE(Launch("s1b", Overlay("a2")).ok());
  const std::string sibling =
      Sh("s1b", absl::StrCat("cd ", conv_, "/repos/app && git log --oneline | wc -l; cat README; ",
                             "test -e ", conv_,
                             "/agents/a1 && echo A1-VISIBLE; cat ../../agents/a2/", "work/secret"));
  EXPECT_EQ(sibling, "2\noriginal\nedit\na2's notes\n") << sibling;
}

TEST_P(WorkspaceTest, HarnessBashBindsOnlyTheRunsWorkingDirectory) {
  v1::WorkspaceDispatch d;
  d.set_agent_id("a1");
  d.set_kind(v1::WorkspaceDispatch::KIND_HARNESS_BASH);
  d.set_workdir(conv_ + "/repos/app");
  grpc::Status launched = Launch("s2", d);
  ASSERT_TRUE(launched.ok()) << launched.error_message();
  const std::string out =
      Sh("s2", absl::StrCat("pwd; echo repos: $(ls ", conv_, "/repos); ", "test -e ", conv_,
                            "/agents && echo AGENTS-VISIBLE; ", "test -e ", attachments_,
                            " && echo ATTACHMENTS-VISIBLE; ", "echo ok > new-file && echo wrote"));
  EXPECT_TRUE(absl::StrContains(out, conv_ + "/repos/app\nrepos: app\n")) << out;
  EXPECT_FALSE(absl::StrContains(out, "VISIBLE")) << out;
  EXPECT_TRUE(absl::StrContains(out, "wrote")) << out;
  // A workdir in a sibling's directory, or through a symlink planted in repos/, is refused.
  fs::create_directory_symlink(conv_ + "/agents/a2/work", conv_ + "/repos/planted");
  for (const std::string& workdir :
       {conv_ + "/agents/a2/work", conv_ + "/repos/planted", repo_, conv_}) {
    d.set_workdir(workdir);
    grpc::Status refused = Launch("s3", d);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << workdir;
    EXPECT_TRUE(absl::StartsWith(refused.error_message(), "dispatch.workdir: "))
        << refused.error_message();
  }
}

TEST_P(WorkspaceTest, RegisteredCheckoutsAreProtectedInEveryLaunchOfTheWorkspace) {
  // A spec of its own (no dispatch) binding the directory that holds the checkouts.
  auto launch = [&](const std::string& id, const std::string& workspace) {
    v1::LaunchRequest request;
    request.mutable_spec()->set_session_id(id);
    request.mutable_spec()->set_workspace_id(workspace);
    v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
    bind->set_host_path(src_);
    bind->set_guest_path(src_);
    v1::SandboxHandle handle;
    grpc::ClientContext ctx;
    return broker_->Launch(&ctx, request, &handle);
  };
  ASSERT_TRUE(launch("p1", "w").ok());
  const std::string script = absl::StrCat(
      "(echo x >> ", repo_, "/README) 2>/dev/null && echo APP-WRITABLE || echo app-ro; ",
      "(echo x > ", lib_, "/new-file) 2>/dev/null && echo LIB-WRITABLE || ",
      "echo lib-ro; echo new > ", src_, "/other && echo src-rw");
  const std::string out = Sh("p1", script);
  EXPECT_TRUE(absl::StrContains(out, "app-ro")) << out;
  EXPECT_TRUE(absl::StrContains(out, "lib-ro")) << out;
  EXPECT_TRUE(absl::StrContains(out, "src-rw")) << out;
  EXPECT_EQ(ReadFile(repo_ + "/README"), "original\n");
  // Another workspace id: the checkouts are not its registered ones.
  ASSERT_TRUE(launch("p2", "other").ok());
  EXPECT_TRUE(
      absl::StrContains(Sh("p2", absl::StrCat("echo x >> ", repo_, "/README && echo rw")), "rw"));
}

TEST_P(WorkspaceTest, ConfinePathAgreesWithTheBinds) {
  auto confine = [&](const std::string& path, v1::PathIntent intent) {
    v1::ConfinePathRequest r;
    *r.mutable_dispatch() = Overlay("a1");
    r.mutable_dispatch()->set_workspace_id("w");
    r.mutable_dispatch()->set_conversation_id("c");
    r.set_path(path);
    r.set_intent(intent);
    v1::ConfinedPath out;
    grpc::ClientContext ctx;
    return policy_->ConfinePath(&ctx, r, &out);
  };
  EXPECT_TRUE(confine("notes.md", v1::PATH_INTENT_WRITE).ok());  // relative: the agent's workdir
  EXPECT_TRUE(confine(conv_ + "/repos/app/README", v1::PATH_INTENT_WRITE).ok());
  EXPECT_TRUE(confine(attachments_ + "/brief.txt", v1::PATH_INTENT_READ).ok());
  EXPECT_EQ(confine(attachments_ + "/brief.txt", v1::PATH_INTENT_WRITE).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(confine(conv_ + "/agents/a1/config/x", v1::PATH_INTENT_WRITE).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(confine(conv_ + "/agents/a2/work/secret", v1::PATH_INTENT_READ).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(confine(repo_ + "/README", v1::PATH_INTENT_READ).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // A symlink in the clone pointing at the sibling is resolved and refused too.
  fs::create_directory_symlink(conv_ + "/agents/a2/work", conv_ + "/repos/app/peek");
  EXPECT_EQ(confine(conv_ + "/repos/app/peek/secret", v1::PATH_INTENT_READ).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_P(WorkspaceTest, BadInputAndBindsIntoTheDataDirectoryAreRefused) {
  v1::LaunchRequest both;
  both.mutable_spec()->set_session_id("b1");
  *both.mutable_dispatch() = Overlay("a1");
  both.mutable_dispatch()->set_workspace_id("w");
  both.mutable_dispatch()->set_conversation_id("c");
  v1::SandboxBindMount* extra = both.mutable_spec()->add_bind_mounts();
  extra->set_host_path(src_);
  extra->set_guest_path(src_);
  v1::SandboxHandle handle;
  grpc::ClientContext c1;
  grpc::Status s = broker_->Launch(&c1, both, &handle);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(s.error_message(), "bindMounts: ")) << s.error_message();

  both.mutable_spec()->clear_bind_mounts();
  both.mutable_spec()->add_runner_state_dirs(conv_ + "/agents/a1/config");
  grpc::ClientContext c1b;
  s = broker_->Launch(&c1b, both, &handle);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(s.error_message(), "runnerStateDirs: ")) << s.error_message();

  EXPECT_EQ(Launch("b2", Overlay("a9")).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Launch("b3", Overlay("../a2")).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  // Binding the data directory, or a whole conversation (every agent's directories), by hand.
  for (const std::string& path :
       {data_, conv_, conv_ + "/agents", data_ + "/workspaces/w", root_}) {
    v1::LaunchRequest r;
    r.mutable_spec()->set_session_id("b4");
    v1::SandboxBindMount* b = r.mutable_spec()->add_bind_mounts();
    b->set_host_path(path);
    b->set_guest_path(path);
    grpc::ClientContext ctx;
    grpc::Status refused = broker_->Launch(&ctx, r, &handle);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << path;
    EXPECT_TRUE(absl::StrContains(refused.error_message(), "the broker's data directory"))
        << refused.error_message();
  }

  for (const std::string& id :
       {std::string(".."), std::string("a/b"), std::string(""), std::string(4096, 'x')}) {
    v1::ProvisionRequest p;
    p.set_workspace_id("w");
    p.set_conversation_id(id);
    v1::Conversation out;
    grpc::ClientContext ctx;
    grpc::Status refused = workspaces_->ProvisionConversation(&ctx, p, &out);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << id;
    EXPECT_TRUE(absl::StartsWith(refused.error_message(), "conversationId: "))
        << refused.error_message();
    EXPECT_LT(refused.error_message().size(), 1100u);
  }
}

TEST_P(WorkspaceTest, TeardownWaitsForTheSessionsThenRemovesEverything) {
  ASSERT_TRUE(Launch("t1", Overlay("a1")).ok());
  v1::TeardownResponse removed;
  grpc::Status busy = Teardown("", &removed);
  EXPECT_EQ(busy.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(busy.error_message(), "t1")) << busy.error_message();
  EXPECT_TRUE(PathExists(conv_));
  // The sibling's directories are not bound by t1: a2 goes now.
  ASSERT_TRUE(Teardown("a2", &removed).ok());
  EXPECT_FALSE(PathExists(conv_ + "/agents/a2"));
  EXPECT_TRUE(PathExists(conv_ + "/agents/a1/work"));
  ASSERT_TRUE(Destroy("t1").ok());
  grpc::Status done = Teardown("", &removed);
  ASSERT_TRUE(done.ok()) << done.error_message();
  ASSERT_EQ(removed.removed_size(), 1);
  EXPECT_EQ(removed.removed(0), conv_);
  EXPECT_FALSE(PathExists(conv_));
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(data_ + "/workspaces/w/conversations")) {
    left.push_back(e.path().filename());
  }
  EXPECT_TRUE(left.empty()) << left.size();
  EXPECT_EQ(ReadFile(repo_ + "/README"), "original\n");
}

INSTANTIATE_TEST_SUITE_P(Brokers, WorkspaceTest, ::testing::Bool(), BrokerIdentityName);

// A broker without --data-dir says so, for the workspace service and a dispatch alike.
TEST(WorkspaceWithoutDataDir, RefusedSayingWhatIsMissing) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  absl::StatusOr<std::unique_ptr<Daemons>> d = Daemons::Start();
  ASSERT_TRUE(d.ok()) << d.status();
  auto channel = grpc::CreateChannel((*d)->broker_address(), grpc::InsecureChannelCredentials());
  auto workspaces = v1::SandboxWorkspace::NewStub(channel);
  v1::WorkspaceRequest r;
  r.set_workspace_id("w");
  v1::Workspace w;
  grpc::ClientContext c1;
  grpc::Status s = workspaces->GetWorkspace(&c1, r, &w);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--data-dir")) << s.error_message();
  v1::LaunchRequest launch;
  launch.mutable_spec()->set_session_id("x");
  launch.mutable_dispatch()->set_workspace_id("w");
  v1::SandboxHandle handle;
  grpc::ClientContext c2;
  s = v1::SandboxBroker::NewStub(channel)->Launch(&c2, launch, &handle);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--data-dir")) << s.error_message();
}

}  // namespace
}  // namespace ccsandbox::testing
