// Test-only: the fixture of the BrokerService tests. A BrokerService served in-process, its
// launcher the fake (broker/fake_launcher.h) on a Unix socket in a scratch directory, with the
// client calls the tests make and an Exec stream read at the test's own pace.
#ifndef CCSANDBOX_BROKER_BROKER_SERVICE_FIXTURE_H_
#define CCSANDBOX_BROKER_BROKER_SERVICE_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "broker/broker_service.h"
#include "broker/fake_launcher.h"
#include "broker/runtime_dir.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "proxy/event_loop.h"
#include "proxy/static_resolver.h"

namespace ccsandbox::broker::testing {

// An Exec stream read by the test at its own pace.
class OpenExec {
 public:
  OpenExec(v1::SandboxBroker::Stub& stub, const v1::ExecRequest& request)
      : reader_(stub.Exec(&context_, request)) {}

  // Reads up to and including the `ready` event; false if the stream ended first.
  bool ReadUntilReady() {
    v1::SandboxEvent event;
    while (reader_->Read(&event)) {
      events_.push_back(event);
      if (event.has_ready()) return true;
    }
    return false;
  }
  // Reads the rest and returns the call's status.
  grpc::Status Finish() {
    v1::SandboxEvent event;
    while (reader_->Read(&event)) events_.push_back(event);
    return reader_->Finish();
  }
  void Cancel() { context_.TryCancel(); }
  const std::vector<v1::SandboxEvent>& events() const { return events_; }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader_;
  std::vector<v1::SandboxEvent> events_;
};

v1::ExecRequest Request(const std::string& session, std::vector<std::string> argv);

class BrokerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A broker on a host whose probe found the native backend, its launcher the fake.
  void StartBroker(bool sandbox_enabled = true);

  // Returns once every call in flight has returned: what a handler does after its client has
  // gone (a one-shot session's Destroy) has happened by then. The service's own methods still
  // answer (Direct*).
  void StopBroker() {
    if (broker_server_ == nullptr) return;
    stub_.reset();
    broker_server_->Shutdown();
    broker_server_.reset();
  }

  std::string launcher_address() const { return absl::StrCat("unix:", root_, "/launcher/sock"); }

  v1::LaunchRequest LaunchRequest(const std::string& id, const std::string& backend = "") {
    v1::LaunchRequest request;
    request.set_backend(backend);
    request.mutable_spec()->set_session_id(id);
    v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
    bind->set_host_path(work_);
    bind->set_guest_path(work_);
    return request;
  }

  grpc::Status Launch(const v1::LaunchRequest& request, v1::SandboxHandle* handle) {
    grpc::ClientContext context;
    return stub_->Launch(&context, request, handle);
  }
  v1::SandboxHandle Launch(const std::string& id, const std::string& backend = "") {
    v1::SandboxHandle handle;
    grpc::Status status = Launch(LaunchRequest(id, backend), &handle);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return handle;
  }

  struct Stream {
    std::vector<v1::SandboxEvent> events;
    grpc::Status status;
  };
  Stream Exec(const v1::ExecRequest& request) {
    OpenExec exec(*stub_, request);
    grpc::Status status = exec.Finish();
    return {exec.events(), status};
  }

  grpc::Status GetSession(const std::string& id, v1::SandboxHandle* handle) {
    grpc::ClientContext context;
    v1::SessionRequest request;
    request.set_session_id(id);
    return stub_->GetSession(&context, request, handle);
  }
  v1::SandboxState StateOf(const std::string& id) {
    v1::SandboxHandle handle;
    grpc::Status status = GetSession(id, &handle);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return handle.state();
  }
  std::vector<v1::SandboxHandle> ListSessions() {
    grpc::ClientContext context;
    v1::ListSessionsResponse response;
    EXPECT_TRUE(stub_->ListSessions(&context, v1::ListSessionsRequest(), &response).ok());
    return {response.sessions().begin(), response.sessions().end()};
  }
  grpc::Status Destroy(const std::string& id, v1::SandboxHandle* handle) {
    grpc::ClientContext context;
    v1::SessionRequest request;
    request.set_session_id(id);
    return stub_->Destroy(&context, request, handle);
  }
  grpc::Status Kill(const std::string& id, const std::string& reason, int* runs_signalled) {
    grpc::ClientContext context;
    v1::KillRequest request;
    request.set_session_id(id);
    request.set_reason(reason);
    v1::KillResponse response;
    grpc::Status status = stub_->Kill(&context, request, &response);
    *runs_signalled = response.runs_signalled();
    return status;
  }
  // GetSession on the service itself, for after StopBroker.
  grpc::Status DirectGetSession(const std::string& id) {
    grpc::ServerContext context;
    v1::SessionRequest request;
    request.set_session_id(id);
    v1::SandboxHandle handle;
    return broker_->GetSession(&context, &request, &handle);
  }
  // Session directories (proxy sockets) in the runtime dir.
  int EgressDirs();

  FakeLauncher& fake() { return launcher_->fake(); }

  std::string root_;
  std::string work_;
  proxy::EventLoop loop_;
  std::shared_ptr<proxy::StaticResolver> resolver_ = std::make_shared<proxy::StaticResolver>();
  std::unique_ptr<RuntimeDir> runtime_dir_;
  std::unique_ptr<LauncherServer> launcher_;
  std::unique_ptr<BrokerService> broker_;
  std::unique_ptr<grpc::Server> broker_server_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
};

}  // namespace ccsandbox::broker::testing

#endif  // CCSANDBOX_BROKER_BROKER_SERVICE_FIXTURE_H_
