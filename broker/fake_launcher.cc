#include "broker/fake_launcher.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "proto/grpc_limits.h"

namespace ccsandbox::broker::testing {

using grpc::StatusCode;

grpc::Status FakeLauncher::Run(grpc::ServerContext* context, const v1::LaunchPlan* plan,
                               grpc::ServerWriter<v1::SandboxEvent>* writer) {
  const std::string program = plan->argv_size() > 0 ? plan->argv(0) : "";
  const std::string& run_id = plan->run_id();
  {
    absl::MutexLock lock(&mu_);
    plans_.push_back(*plan);
    // Registered before its first event, as the launcher does: a Kill sent once the client
    // has seen `ready` finds the run.
    if (program == "hold") held_[run_id] = std::nullopt;
  }
  if (program == "mute") {
    while (!context->IsCancelled()) absl::SleepFor(absl::Milliseconds(5));
    return grpc::Status(StatusCode::CANCELLED, "run cancelled");
  }
  auto emit = [&](v1::SandboxEvent event) {
    event.set_session_id(absl::StrCat("not-", plan->session_id()));
    event.set_backend(plan->backend() == v1::SANDBOX_BACKEND_NATIVE ? v1::SANDBOX_BACKEND_NONE
                                                                    : v1::SANDBOX_BACKEND_NATIVE);
    writer->Write(event);
  };
  v1::SandboxEvent event;
  event.mutable_starting()->set_run_id(run_id);
  emit(event);
  event.Clear();
  event.mutable_ready()->set_pid(kFakePid);
  emit(event);
  if (program == "lose") return grpc::Status(StatusCode::UNAVAILABLE, kLostMessage);
  if (program == "hold") {
    std::optional<v1::SignalRequest> signal;
    {
      absl::MutexLock lock(&mu_);
      auto signalled = [&] { return held_[run_id].has_value() || context->IsCancelled(); };
      // Cancellation comes without a notification: look again every few milliseconds.
      while (!mu_.AwaitWithTimeout(absl::Condition(&signalled), absl::Milliseconds(5))) {
      }
      signal = held_[run_id];
      held_.erase(run_id);
      outcomes_[run_id] = signal.has_value() ? "signalled" : "cancelled";
    }
    if (!signal.has_value()) return grpc::Status(StatusCode::CANCELLED, "run cancelled");
    event.Clear();
    event.mutable_killed()->set_reason(signal->reason());
    event.mutable_killed()->set_detail(signal->detail());
    event.mutable_killed()->set_signal(signal->signal());
    emit(event);
    return grpc::Status::OK;
  }
  event.Clear();
  event.set_stdout("out\n");
  emit(event);
  event.Clear();
  event.set_stderr("err\n");
  emit(event);
  event.Clear();
  event.mutable_exit()->set_exit_code(plan->argv_size() > 1 ? std::stoi(plan->argv(1)) : 0);
  emit(event);
  return grpc::Status::OK;
}

grpc::Status FakeLauncher::Signal(grpc::ServerContext*, const v1::SignalRequest* request,
                                  v1::SignalResponse* response) {
  absl::MutexLock lock(&mu_);
  signals_.push_back(*request);
  auto run = held_.find(request->run_id());
  if (miss_signals_ || run == held_.end()) {
    response->set_delivered(false);
    return grpc::Status(StatusCode::NOT_FOUND, "no such run");
  }
  run->second = *request;
  response->set_delivered(true);
  return grpc::Status::OK;
}

grpc::Status FakeLauncher::StartSandbox(grpc::ServerContext* context, const v1::LaunchPlan* plan,
                                        grpc::ServerWriter<v1::SandboxLifecycle>* writer) {
  const std::string& id = plan->run_id();
  {
    absl::MutexLock lock(&mu_);
    sandbox_plans_.push_back(*plan);
    if (refuse_sandboxes_) {
      return grpc::Status(StatusCode::FAILED_PRECONDITION,
                          "the sandbox did not start: the fake launcher refuses sandboxes");
    }
    held_[id] = std::nullopt;
  }
  v1::SandboxLifecycle warm;
  warm.mutable_warm()->set_pid(kFakePid);
  writer->Write(warm);
  std::optional<v1::SignalRequest> signal;
  {
    absl::MutexLock lock(&mu_);
    auto ended = [&] { return held_[id].has_value() || context->IsCancelled(); };
    while (!mu_.AwaitWithTimeout(absl::Condition(&ended), absl::Milliseconds(5))) {
    }
    signal = held_[id];
    held_.erase(id);
    outcomes_[id] = signal.has_value() ? "signalled" : "cancelled";
  }
  if (!signal.has_value()) return grpc::Status(StatusCode::CANCELLED, "sandbox cancelled");
  v1::SandboxLifecycle ended;
  ended.mutable_ended()->set_reason(signal->reason());
  writer->Write(ended);
  return grpc::Status::OK;
}

v1::LauncherProbeResponse GuardAvailable() {
  v1::LauncherProbeResponse probe;
  probe.set_create_guard_available(true);
  probe.set_create_guard_reason("enforced by the fake launcher");
  return probe;
}

void LauncherServer::Start(v1::LauncherProbeResponse probe) {
  fake_ = std::make_unique<FakeLauncher>(std::move(probe));
  grpc::ServerBuilder builder;
  ApplyServerLimits(builder);
  builder.AddListeningPort(absl::StrCat("unix:", socket_), grpc::InsecureServerCredentials());
  builder.RegisterService(fake_.get());
  server_ = builder.BuildAndStart();
  ASSERT_NE(server_, nullptr);
}

void LauncherServer::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now());
  server_.reset();
}

}  // namespace ccsandbox::broker::testing
