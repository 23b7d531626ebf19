// End-to-end support for the workspace suites: a real XFS (reflink=1) volume made by the test,
// two committed checkouts on it (src/app, src/lib), an attachments directory and the broker's
// data directory — handed to the unprivileged broker's user when the parameter is true — and
// both daemons started with --data-dir, with stubs and the calls the suites share.
//
//   class MyTest : public WorkspaceFixture {
//     void SetUp() override {
//       ASSERT_NO_FATAL_FAILURE(SetUpWorkspace());
//       ASSERT_TRUE(Register({{"app", repo_}}).ok());
//     }
//   };
//   INSTANTIATE_TEST_SUITE_P(Brokers, MyTest, ::testing::Bool(), BrokerIdentityName);
#ifndef CCSANDBOX_TESTS_WORKSPACE_FIXTURE_H_
#define CCSANDBOX_TESTS_WORKSPACE_FIXTURE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/policy.grpc.pb.h"
#include "proto/sandbox.grpc.pb.h"
#include "proto/workspace.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/reflink_volumes.h"

namespace ccsandbox::testing {

// The parameter: true runs the broker as the unprivileged test user.
class WorkspaceFixture : public ::testing::TestWithParam<bool> {
 protected:
  // The volume, checkouts, directories and daemons (skips, or fails under CI, without root).
  void SetUpWorkspace();
  void TearDown() override;
  // (Re)starts both daemons on the data directory (after d_.reset(): a broker restart).
  void StartDaemons();

  // `git -C dir` with a fixed identity; fails the test when git does.
  static void Git(const std::string& dir, const std::vector<std::string>& args);
  // Registers workspace "w" with these (name, path) repositories.
  grpc::Status Register(const std::vector<std::pair<std::string, std::string>>& repos,
                        const std::string& attachments = "");
  grpc::Status Provision(const std::string& conversation, const std::vector<std::string>& agents,
                         v1::Conversation* out);
  // Launches `id` in workspace "w" with `dispatch` (conversation "c" unless it names one).
  grpc::Status Launch(const std::string& id, v1::WorkspaceDispatch dispatch,
                      v1::SandboxHandle* handle = nullptr);
  // Launches `id` in workspace "w" binding `dir` by hand (no dispatch).
  grpc::Status LaunchBinding(const std::string& id, const std::string& dir);
  // `sh -c script` in the session: stdout + stderr, and the exit code when asked.
  std::string Sh(const std::string& session, const std::string& script, int* exit = nullptr);
  // `argv` in the session: stdout + stderr.
  std::string Run(const std::string& session, const std::vector<std::string>& argv);
  grpc::Status Destroy(const std::string& id);
  // Tears down conversation `conversation` of "w", or only `agent`'s directories.
  grpc::Status Teardown(const std::string& conversation, const std::string& agent,
                        v1::TeardownResponse* out);

  static v1::WorkspaceDispatch Overlay(const std::string& agent);
  static v1::WorkspaceDispatch Harness(const std::string& agent, const std::string& workdir);

  std::unique_ptr<TestVolume> volume_;
  std::string root_, src_, repo_, lib_, attachments_, data_;
  std::unique_ptr<Daemons> d_;
  std::unique_ptr<v1::SandboxBroker::Stub> broker_;
  std::unique_ptr<v1::SandboxWorkspace::Stub> workspaces_;
  std::unique_ptr<v1::SandboxPolicy::Stub> policy_;
};

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_WORKSPACE_FIXTURE_H_
