// The microvm sessions (docs/microvm.md): the guest booted in the session's native sandbox, its
// Execs, its end.
#include <signal.h>

#include <optional>
#include <string>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/event_outbox.h"
#include "broker/broker_service.h"
#include "broker/launcher_hypervisor.h"
#include "broker/microvm/probe_result.h"
#include "proto/grpc_status.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {

absl::Status BrokerService::StartSessionGuest(const std::string& session_id,
                                              const SessionTable::RunStart& start,
                                              const std::string& sandbox_id,
                                              const std::string& state_dir,
                                              microvm::GuestLayout layout) {
  // The hypervisor is a run of the session's sandbox: it brings only its own fields.
  v1::LaunchPlan run;
  run.set_run_id(absl::StrCat(NextRunId(session_id), "-microvm"));
  run.set_session_id(session_id);
  run.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  run.set_sandbox_id(sandbox_id);
  run.set_workdir("/");
  (*run.mutable_env())["PATH"] = "/usr/bin:/bin";
  microvm::GuestStart guest_start{
      .spec = start.spec,
      .state_dir = state_dir,
      .hypervisor = LauncherHypervisorStarter(
          *launcher_.stub, std::move(run),
          [this, session_id](const v1::SandboxEvent& event) {
            // The create guard refused a name the guest created through its shares.
            v1::SandboxEvent labelled = event;
            labelled.set_session_id(session_id);
            labelled.set_backend(v1::SANDBOX_BACKEND_MICROVM);
            config_.metrics.Violation(labelled.violation().action());
            events_.Publish(session_id, labelled);
          },
          [this, session_id](const std::string& how, const std::string& console) {
            // The guest powered off, panicked or its hypervisor died: the session is in error.
            const size_t panic = console.find("Kernel panic");
            const std::string cause = absl::StrCat(
                panic == std::string::npos ? "its microVM's hypervisor " : "its microVM panicked: ",
                how, " ('",
                microvm::QuotableLine(panic == std::string::npos ? console : console.substr(panic)),
                "')");
            spdlog::error("session {}: {}", session_id, cause);
            sessions_.Fail(session_id, cause);
          })};
  guest_start.layout = std::move(layout);
  // The guest's only way out: the session's proxies, as a native sandbox's.
  if (const std::optional<v1::EgressPlan> plan = egress_.PlanFor(session_id); plan.has_value()) {
    guest_start.egress = microvm::GuestEgress{.http_socket = plan->http_socket(),
                                              .socks_socket = plan->socks_socket()};
  }
  absl::StatusOr<std::unique_ptr<microvm::Guest>> guest =
      config_.microvm_runtime->Start(guest_start);
  if (!guest.ok()) {
    spdlog::warn("session {} refused: {}", session_id, std::string(guest.status().message()));
    return guest.status();
  }
  if (!guests_.Add(session_id, {.guest = std::shared_ptr<microvm::Guest>(*std::move(guest)),
                                .state_dir = state_dir})) {
    return absl::AlreadyExistsError("sessionId: the session has a microVM already");
  }
  spdlog::info("session {}: microVM warm", session_id);
  return absl::OkStatus();
}

void BrokerService::StopSessionGuest(const std::string& session_id) {
  std::optional<SessionGuests::Entry> entry = guests_.Remove(session_id);
  if (!entry.has_value()) return;
  // A run still in it sees its channel close and ends with `killed`; the Exec holding the
  // guest keeps it alive until then.
  (void)entry->guest->Stop(absl::Seconds(2));
  config_.microvm_state->RemoveSessionDir(entry->state_dir);
}

grpc::Status BrokerService::RunGuestExec(grpc::ServerContext* context,
                                         const v1::ExecRequest& request,
                                         grpc::ServerWriter<v1::SandboxEvent>* writer,
                                         const std::string& run_id, const v1::LaunchPlan& plan,
                                         std::atomic<BrokerMetrics::ExecOutcome>& ended) {
  const std::string& session_id = request.session_id();
  std::shared_ptr<microvm::Guest> guest = guests_.Get(session_id);
  if (guest == nullptr) {
    return ToGrpc(absl::FailedPreconditionError("sessionId: the session's microVM is not running"));
  }
  guests_.BeginRun(run_id);
  absl::Cleanup end_run = [&] { guests_.EndRun(run_id); };
  // Enforcement never waits on the client: events go through a bounded outbox, the guest's
  // output waits for room (back-pressure into the guest), and a client that takes nothing for
  // the stall limit is dropped and its run killed.
  EventOutbox outbox({.capacity_bytes = relay_options_.capacity_bytes},
                     [writer](const v1::SandboxEvent& event) { return writer->Write(event); });
  auto label = [&](v1::SandboxEvent& event) {
    event.set_session_id(session_id);
    event.set_backend(v1::SANDBOX_BACKEND_MICROVM);
  };
  // The session's own events (proxy refusals, create-guard refusals) share the stream; a full
  // stream drops them rather than wait.
  const uint64_t subscription = events_.Subscribe(
      session_id, [&outbox](const v1::SandboxEvent& event) { outbox.TryPush(event); });
  bool subscribed = true;
  auto unsubscribe = [&] {
    if (subscribed) events_.Unsubscribe(session_id, subscription);
    subscribed = false;
  };
  absl::Cleanup unsubscribe_at_end = unsubscribe;

  microvm::GuestCommand command;
  command.argv.assign(plan.argv().begin(), plan.argv().end());
  command.env.insert(plan.env().begin(), plan.env().end());
  command.workdir = plan.workdir();
  command.stdin_data = plan.stdin();
  command.timeout = absl::Milliseconds(plan.timeout_ms());
  command.stop_requested = [&] { return guests_.StopRequested(run_id); };
  bool client_gone = false;
  auto emit = [&](const v1::SandboxEvent& event) -> bool {
    v1::SandboxEvent labelled = event;
    label(labelled);
    if (labelled.has_violation()) config_.metrics.Violation(labelled.violation().action());
    if (labelled.has_exit() || labelled.has_killed()) {
      // Proxy refusals of this run go out before its last event, and none after it.
      egress_.Flush(absl::Seconds(1));
      unsubscribe();
      ended = labelled.has_exit() ? BrokerMetrics::ExecOutcome::kExit
                                  : BrokerMetrics::ExecOutcome::kKilled;
      return outbox.Push(std::move(labelled));
    }
    while (!outbox.HasRoom()) {
      if (context->IsCancelled() || outbox.blocked_for() >= config_.exec_stall_limit) {
        client_gone = true;
        return false;
      }
      if (!guests_.StopRequested(run_id).empty()) break;  // its killed event still goes out
      absl::SleepFor(absl::Milliseconds(5));
    }
    if (!outbox.Push(std::move(labelled))) {
      client_gone = true;
      return false;
    }
    return true;
  };
  const absl::Status status = guest->Exec(command, emit);
  unsubscribe();
  const EventOutbox::Drain drained =
      outbox.Finish(config_.exec_stall_limit, [context] { return context->IsCancelled(); });
  if (context->IsCancelled() || client_gone) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client");
  }
  if (!status.ok()) return ToGrpc(status);
  if (drained != EventOutbox::kDrained) {
    context->TryCancel();
    return grpc::Status(grpc::StatusCode::CANCELLED, "the client did not read its stream");
  }
  return grpc::Status::OK;
}

}  // namespace ccsandbox::broker
