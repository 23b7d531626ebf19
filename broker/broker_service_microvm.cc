// The microvm sessions (docs/microvm.md): the guest booted in the session's native sandbox, its
// Execs, its end.
#include <signal.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "base/event_outbox.h"
#include "broker/broker_service.h"
#include "broker/guest_plan.h"
#include "broker/launcher_hypervisor.h"
#include "broker/microvm/probe_result.h"
#include "policy/plan/terminal_profile.h"
#include "proto/grpc_status.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {

absl::Status BrokerService::StartSessionGuest(const std::string& session_id,
                                              const SessionTable::RunStart& start,
                                              const std::string& sandbox_id,
                                              const std::string& state_dir,
                                              microvm::GuestLayout layout) {
  // The hypervisor is a run of the session's sandbox: it brings only its own fields.
  v1::LaunchPlan run =
      HypervisorRun(absl::StrCat(NextRunId(session_id), "-microvm"), session_id, sandbox_id);
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
  // A guest found hung while no run was open (a run's own end says it otherwise).
  guest_start.lost = [this, session_id](const std::string& cause) {
    spdlog::error("session {}: its microVM ended: {}", session_id, cause);
    sessions_.Fail(session_id, absl::StrCat("its microVM ended: ", cause));
  };
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

std::string BrokerService::StopSessionGuest(const std::string& session_id) {
  std::optional<SessionGuests::Entry> entry = guests_.Remove(session_id);
  if (!entry.has_value()) return "";
  // A run still in it sees its channel close and ends with `killed`; the Exec holding the
  // guest keeps it alive until then.
  (void)entry->guest->Stop(absl::Seconds(2));
  return entry->state_dir;
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
  bool client_gone = false;
  // A client that went away stops its run even while the run is silent (no event to fail).
  command.stop_requested = [&]() -> std::string {
    if (context->IsCancelled()) {
      client_gone = true;
      return "the client cancelled the run";
    }
    return guests_.StopRequested(run_id);
  };
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
  // A guest the run saw die (a panic on its console, its hypervisor gone, a broken channel) is
  // powered off by the runtime itself, so its hypervisor's end is not "by itself": say it here.
  if (std::string cause; guest->State(&cause) == v1::SANDBOX_STATE_ERROR) {
    spdlog::error("session {}: its microVM ended: {}", session_id, cause);
    sessions_.Fail(session_id, absl::StrCat("its microVM ended: ", cause));
  }
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

grpc::Status BrokerService::MicrovmTerminal(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::TerminalOutput, v1::TerminalInput>* stream,
    const v1::TerminalOpen& open, const policy::BackendChoice& choice, const std::string& id) {
  // The terminal profile as a native terminal gets it; its sandbox is where qemu runs, and the
  // guest's root is that sandbox's view.
  policy::BackendChoice host = choice;
  host.actual = v1::SANDBOX_BACKEND_NATIVE;
  absl::StatusOr<v1::LaunchPlan> plan = PlanTerminal(open, host, id);
  if (!plan.ok()) return ToGrpc(plan.status());
  // The guest has no network device, and nothing bridges a terminal's egress: no network.
  plan->set_open_network(false);
  microvm::GuestCommand command;
  command.argv.assign(plan->argv().begin(), plan->argv().end());
  command.env.insert(plan->env().begin(), plan->env().end());
  command.workdir = plan->workdir();
  absl::StatusOr<microvm::GuestLayout> layout = GuestLayoutOf(*plan);
  if (!layout.ok()) return ToGrpc(layout.status());
  absl::StatusOr<std::string> state_dir = config_.microvm_state->CreateSessionDir();
  if (!state_dir.ok()) return ToGrpc(state_dir.status());
  absl::Cleanup remove_state_dir = [&] { config_.microvm_state->RemoveSessionDir(*state_dir); };
  plan->clear_argv();
  const std::string sandbox_id = absl::StrCat(id, "-sandbox");
  plan->set_run_id(sandbox_id);
  AddHypervisorMounts(*state_dir, config_.microvm_runtime->HostFiles(), *plan);
  if (grpc::Status reachable = AwaitLauncher(); !reachable.ok()) return reachable;
  absl::StatusOr<v1::SandboxLifecycle::Warm> warm =
      sandboxes_.Start(*launcher_.stub, *plan, [id](const std::string& why) {
        spdlog::warn("terminal {}: its sandbox ended: {}", id, why);
      });
  if (!warm.ok()) return ToGrpc(warm.status());
  absl::Cleanup stop_sandbox = [&] {
    sandboxes_.Stop(*launcher_.stub, sandbox_id, "the terminal ended");
  };

  absl::Mutex write_mu;  // the runtime's callbacks and this thread both write to the client
  auto write = [&](const v1::TerminalOutput& out) {
    absl::MutexLock lock(&write_mu);
    return stream->Write(out);
  };
  v1::LaunchPlan hypervisor_run = HypervisorRun(absl::StrCat(id, "-microvm"), id, sandbox_id);
  microvm::GuestStart start{.state_dir = *state_dir,
                            .hypervisor = LauncherHypervisorStarter(
                                *launcher_.stub, std::move(hypervisor_run),
                                [&, id](const v1::SandboxEvent& event) {
                                  v1::TerminalOutput out;
                                  *out.mutable_event() = event;
                                  out.mutable_event()->set_session_id(id);
                                  out.mutable_event()->set_backend(v1::SANDBOX_BACKEND_MICROVM);
                                  config_.metrics.Violation(event.violation().action());
                                  write(out);
                                },
                                [id](const std::string& how, const std::string&) {
                                  spdlog::warn("terminal {}: its microVM's hypervisor {}", id, how);
                                })};
  start.layout = *std::move(layout);
  absl::StatusOr<std::unique_ptr<microvm::Guest>> guest = config_.microvm_runtime->Start(start);
  if (!guest.ok()) {
    spdlog::warn("terminal {} refused: {}", id, std::string(guest.status().message()));
    return ToGrpc(guest.status());
  }
  absl::Cleanup stop_guest = [&] { (void)(*guest)->Stop(absl::Seconds(2)); };

  absl::Notification ended;
  absl::StatusOr<std::unique_ptr<microvm::GuestTerminal>> terminal = (*guest)->Terminal(
      command, static_cast<uint16_t>(open.size().rows()), static_cast<uint16_t>(open.size().cols()),
      {.output =
           [&](const std::string& bytes) {
             v1::TerminalOutput out;
             out.set_data(bytes);
             if (!write(out)) context->TryCancel();  // the client stopped taking output
           },
       .exited =
           [&, id](int exit_code, const std::string& cause) {
             v1::TerminalOutput out;
             v1::SandboxEvent* end = out.mutable_ended();
             end->set_session_id(id);
             end->set_backend(v1::SANDBOX_BACKEND_MICROVM);
             if (exit_code >= 0 && cause.empty()) {
               end->mutable_exit()->set_exit_code(exit_code);
             } else {
               end->mutable_killed()->set_signal(exit_code < 0 ? -exit_code : SIGKILL);
               end->mutable_killed()->set_reason(cause.empty() ? "stopped" : "sandbox-ended");
               end->mutable_killed()->set_detail(cause);
             }
             write(out);
             ended.Notify();
           }});
  if (!terminal.ok()) return ToGrpc(terminal.status());
  v1::TerminalOutput opened;
  v1::SandboxHandle* handle = opened.mutable_opened();
  handle->set_session_id(id);
  handle->set_requested_backend(choice.requested);
  handle->set_backend(v1::SANDBOX_BACKEND_MICROVM);
  handle->set_state(v1::SANDBOX_STATE_ACTIVE);
  auto& details = *handle->mutable_details()->mutable_fields();
  details["backendNote"].set_string_value(choice.note);
  details["kind"].set_string_value("terminal");
  details["network"].set_string_value("none: the guest has no network device");
  TerminalTable::Entry listed = terminals_.Add(*handle, [&] {
    (*terminal)->Close(absl::Seconds(2));
    context->TryCancel();
  });
  write(opened);
  spdlog::info("terminal {} opened: backend microvm, workdir {}", id, command.workdir);

  // Input until the client is done or gone, or the shell has ended.
  std::atomic<bool> input_done = false;
  std::thread input([&] {
    v1::TerminalInput in;
    while (!ended.HasBeenNotified() && stream->Read(&in)) {
      switch (in.input_case()) {
        case v1::TerminalInput::kData:
          if (in.data().size() > kMaxTerminalData) {
            spdlog::warn("terminal {}: a data message of {} bytes: hung up", id, in.data().size());
            context->TryCancel();
            break;
          }
          (void)(*terminal)->Input(in.data());
          break;
        case v1::TerminalInput::kResize:
          if (policy::ValidTerminalSize(in.resize())) {
            (void)(*terminal)->Resize(static_cast<uint16_t>(in.resize().rows()),
                                      static_cast<uint16_t>(in.resize().cols()));
          }
          break;
        case v1::TerminalInput::kSignal:
          if (policy::IsTerminalSignal(in.signal())) (void)(*terminal)->Signal(in.signal());
          break;
        default:
          break;
      }
    }
    if (!ended.HasBeenNotified()) (*terminal)->Close(absl::Seconds(2));  // hung up
    input_done = true;
  });
  ended.WaitForNotification();
  // The client closes its side once it has the end; one that does not is cut off.
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!input_done && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  if (!input_done) context->TryCancel();
  input.join();
  spdlog::info("terminal {} closed", id);
  return grpc::Status::OK;
}

}  // namespace ccsandbox::broker
