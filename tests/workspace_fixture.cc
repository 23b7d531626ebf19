#include "tests/workspace_fixture.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "tests/exec_events.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {

namespace fs = std::filesystem;

void WorkspaceFixture::Git(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProgramResult r = RunProgram(argv);
  ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
}

void WorkspaceFixture::SetUpWorkspace() {
  if (::geteuid() != 0) CCSANDBOX_SKIP_OR_FAIL_IN_CI("needs root (loop-mounted volumes)");
  absl::StatusOr<std::unique_ptr<TestVolume>> volume =
      TestVolume::Make(TestVolume::Kind::kXfsReflink);
  if (!volume.ok() && absl::IsFailedPrecondition(volume.status())) {
    CCSANDBOX_SKIP_OR_FAIL_IN_CI(std::string(volume.status().message()));
  }
  ASSERT_TRUE(volume.ok()) << volume.status();
  volume_ = *std::move(volume);
  root_ = volume_->path();
  src_ = root_ + "/src";
  repo_ = src_ + "/app";
  lib_ = src_ + "/lib";
  for (const std::string& dir : {repo_, lib_}) {
    fs::create_directories(dir);
    std::ofstream(dir + "/README") << "original\n";
    Git(dir, {"init", "-q", "-b", "main"});
    Git(dir, {"add", "-A"});
    Git(dir, {"commit", "-q", "-m", "init"});
  }
  attachments_ = root_ + "/attachments";
  fs::create_directories(attachments_);
  std::ofstream(attachments_ + "/brief.txt") << "the brief\n";
  data_ = root_ + "/data";
  fs::create_directories(data_);
  ::chmod(data_.c_str(), 0700);
  ::chmod(root_.c_str(), 0755);
  // The volume's own temp dir (0700) must let the unprivileged broker through to it.
  ::chmod(fs::path(root_).parent_path().c_str(), 0711);
  if (GetParam()) {
    absl::StatusOr<launcher::Identity> user = UnprivilegedTestUser();
    ASSERT_TRUE(user.ok()) << user.status();
    // What the broker clones is the user's tree, and its data directory its own.
    for (const std::string& path : {src_, data_, attachments_}) {
      ASSERT_EQ(
          RunProgram({"chown", "-R", absl::StrCat(user->uid, ":", user->gid), path}).exit_code, 0);
    }
  }
  StartDaemons();
}

void WorkspaceFixture::StartDaemons() {
  absl::StatusOr<std::unique_ptr<Daemons>> d =
      Daemons::Start({.broker_flags = {"--data-dir=" + data_}, .unprivileged_broker = GetParam()});
  ASSERT_TRUE(d.ok()) << d.status();
  d_ = *std::move(d);
  auto channel = grpc::CreateChannel(d_->broker_address(), grpc::InsecureChannelCredentials());
  broker_ = v1::SandboxBroker::NewStub(channel);
  workspaces_ = v1::SandboxWorkspace::NewStub(channel);
  policy_ = v1::SandboxPolicy::NewStub(channel);
}

void WorkspaceFixture::TearDown() {
  d_.reset();
  volume_.reset();
}

grpc::Status WorkspaceFixture::Register(
    const std::vector<std::pair<std::string, std::string>>& repos, const std::string& attachments) {
  v1::Workspace w;
  w.set_workspace_id("w");
  for (const auto& [name, path] : repos) {
    v1::WorkspaceRepository* r = w.add_repositories();
    r->set_name(name);
    r->set_path(path);
  }
  w.set_attachments_dir(attachments);
  grpc::ClientContext ctx;
  v1::Workspace stored;
  return workspaces_->RegisterWorkspace(&ctx, w, &stored);
}

grpc::Status WorkspaceFixture::Provision(const std::string& conversation,
                                         const std::vector<std::string>& agents,
                                         v1::Conversation* out) {
  v1::ProvisionRequest p;
  p.set_workspace_id("w");
  p.set_conversation_id(conversation);
  for (const std::string& a : agents) p.add_agent_ids(a);
  grpc::ClientContext ctx;
  return workspaces_->ProvisionConversation(&ctx, p, out);
}

grpc::Status WorkspaceFixture::Launch(const std::string& id, v1::WorkspaceDispatch dispatch,
                                      v1::SandboxHandle* handle) {
  v1::LaunchRequest request;
  request.mutable_spec()->set_session_id(id);
  request.mutable_spec()->set_workspace_id("w");
  if (dispatch.conversation_id().empty()) dispatch.set_conversation_id("c");
  *request.mutable_dispatch() = dispatch;
  v1::SandboxHandle ignored;
  grpc::ClientContext ctx;
  return broker_->Launch(&ctx, request, handle != nullptr ? handle : &ignored);
}

grpc::Status WorkspaceFixture::LaunchBinding(const std::string& id, const std::string& dir) {
  v1::LaunchRequest request;
  request.mutable_spec()->set_session_id(id);
  request.mutable_spec()->set_workspace_id("w");
  v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
  bind->set_host_path(dir);
  bind->set_guest_path(dir);
  v1::SandboxHandle handle;
  grpc::ClientContext ctx;
  return broker_->Launch(&ctx, request, &handle);
}

std::string WorkspaceFixture::Sh(const std::string& session, const std::string& script, int* exit) {
  std::vector<v1::SandboxEvent> events =
      ExecEvents(*broker_, ShExec(session, script), nullptr, absl::Seconds(90));
  if (exit != nullptr) *exit = ExitOf(events);
  return StdoutOf(events) + StderrOf(events);
}

std::string WorkspaceFixture::Run(const std::string& session,
                                  const std::vector<std::string>& argv) {
  v1::ExecRequest request;
  request.set_session_id(session);
  for (const std::string& arg : argv) request.add_argv(arg);
  std::vector<v1::SandboxEvent> events = ExecEvents(*broker_, request, nullptr, absl::Seconds(90));
  return StdoutOf(events) + StderrOf(events);
}

grpc::Status WorkspaceFixture::Destroy(const std::string& id) {
  v1::SessionRequest r;
  r.set_session_id(id);
  v1::SandboxHandle h;
  grpc::ClientContext ctx;
  return broker_->Destroy(&ctx, r, &h);
}

grpc::Status WorkspaceFixture::Teardown(const std::string& conversation, const std::string& agent,
                                        v1::TeardownResponse* out) {
  v1::ConversationRequest r;
  r.set_workspace_id("w");
  r.set_conversation_id(conversation);
  if (!agent.empty()) r.set_agent_id(agent);
  grpc::ClientContext ctx;
  return workspaces_->TeardownConversation(&ctx, r, out);
}

v1::WorkspaceDispatch WorkspaceFixture::Overlay(const std::string& agent) {
  v1::WorkspaceDispatch d;
  d.set_agent_id(agent);
  d.set_kind(v1::WorkspaceDispatch::KIND_OVERLAY);
  return d;
}

v1::WorkspaceDispatch WorkspaceFixture::Harness(const std::string& agent,
                                                const std::string& workdir) {
  v1::WorkspaceDispatch d;
  d.set_agent_id(agent);
  d.set_kind(v1::WorkspaceDispatch::KIND_HARNESS_BASH);
  d.set_workdir(workdir);
  return d;
}

}  // namespace ccsandbox::testing
