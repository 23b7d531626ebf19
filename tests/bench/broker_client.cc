#include "tests/bench/broker_client.h"

#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "tests/bench/bench_process.h"

namespace ccsandbox::bench {
namespace {

std::chrono::system_clock::time_point In(std::chrono::seconds seconds) {
  return std::chrono::system_clock::now() + seconds;
}

absl::Status RpcError(const char* rpc, const grpc::Status& status) {
  return absl::InternalError(absl::StrCat(rpc, ": ", status.error_message()));
}

}  // namespace

absl::Status CheckNativeDispatch(v1::SandboxBroker::Stub& stub, const std::string& broker_log) {
  grpc::ClientContext context;
  context.set_deadline(In(std::chrono::seconds(10)));
  context.set_wait_for_ready(true);
  v1::ProbeResponse probe;
  grpc::Status status = stub.Probe(&context, v1::ProbeRequest(), &probe);
  if (!status.ok()) {
    return absl::UnavailableError(absl::StrCat("broker Probe: ", status.error_message(),
                                               "; broker log:\n", Tail(broker_log)));
  }
  if (probe.dispatch_backend() != v1::SANDBOX_BACKEND_NATIVE) {
    return absl::FailedPreconditionError(
        absl::StrCat("the broker would not run natively here: ", probe.status_line()));
  }
  return absl::OkStatus();
}

absl::Status Launch(v1::SandboxBroker::Stub& stub, const v1::SandboxSpec& spec) {
  grpc::ClientContext context;
  context.set_deadline(In(std::chrono::seconds(30)));
  v1::LaunchRequest launch;
  *launch.mutable_spec() = spec;
  launch.set_backend("native");
  v1::SandboxHandle handle;
  grpc::Status status = stub.Launch(&context, launch, &handle);
  return status.ok() ? absl::OkStatus() : RpcError("Launch", status);
}

absl::Status Destroy(v1::SandboxBroker::Stub& stub, const std::string& session_id) {
  grpc::ClientContext context;
  context.set_deadline(In(std::chrono::seconds(30)));
  v1::SessionRequest destroy;
  destroy.set_session_id(session_id);
  v1::SandboxHandle handle;
  grpc::Status status = stub.Destroy(&context, destroy, &handle);
  return status.ok() ? absl::OkStatus() : RpcError("Destroy", status);
}

absl::StatusOr<int> CountSessions(v1::SandboxBroker::Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(In(std::chrono::seconds(10)));
  v1::ListSessionsResponse list;
  grpc::Status status = stub.ListSessions(&context, v1::ListSessionsRequest(), &list);
  if (!status.ok()) return RpcError("ListSessions", status);
  return list.sessions_size();
}

absl::StatusOr<ExecTiming> TimeExec(v1::SandboxBroker::Stub& stub, const v1::ExecRequest& request) {
  ExecTiming timing;
  const Clock::time_point start = Clock::now();
  grpc::ClientContext context;
  context.set_deadline(In(std::chrono::seconds(30)));
  std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader = stub.Exec(&context, request);
  v1::SandboxEvent event;
  int exit_code = -1;
  while (reader->Read(&event)) {
    if (event.has_starting()) timing.starting = MsSince(start);
    if (event.has_ready()) timing.ready = MsSince(start);
    if (event.has_exit()) {
      timing.exit = MsSince(start);
      exit_code = event.exit().exit_code();
    }
  }
  grpc::Status status = reader->Finish();
  timing.end = MsSince(start);
  if (!status.ok()) return RpcError("Exec", status);
  if (exit_code != 0) {
    return absl::InternalError(absl::StrCat("Exec: `", request.argv(0), "` exited ", exit_code));
  }
  return timing;
}

absl::StatusOr<double> TimeProbe(v1::SandboxBroker::Stub& stub) {
  const Clock::time_point start = Clock::now();
  grpc::ClientContext context;
  context.set_deadline(In(std::chrono::seconds(10)));
  v1::ProbeResponse probe;
  grpc::Status status = stub.Probe(&context, v1::ProbeRequest(), &probe);
  if (!status.ok()) return RpcError("Probe", status);
  return MsSince(start);
}

}  // namespace ccsandbox::bench
