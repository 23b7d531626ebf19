#include "broker/broker_service.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/kill_cause.h"
#include "broker/deny_scan.h"
#include "broker/exec_relay.h"
#include "broker/guest_plan.h"
#include "broker/launcher_health.h"
#include "policy/plan/deny_sets.h"
#include "policy/plan/filename_policy.h"
#include "policy/plan/input_limits.h"
#include "policy/plan/launch_plan.h"
#include "proto/grpc_status.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {
namespace {

using std::chrono::milliseconds;

void SetDetail(v1::SandboxHandle& handle, const std::string& key, const std::string& value) {
  (*handle.mutable_details()->mutable_fields())[key].set_string_value(value);
}

// The session's handle as Launch returns it, but for the egress note (added once the proxies
// run).
void FillHandle(const v1::SandboxSpec& spec, const policy::BackendChoice& choice,
                const policy::FilenamePolicyDecision& filenames, v1::SandboxHandle& handle) {
  handle.set_session_id(spec.session_id());
  handle.set_requested_backend(choice.requested);
  handle.set_backend(choice.actual);
  // A native session is warm once its sandbox is; the none backend has nothing to start.
  handle.set_state(HostBackend(choice.actual) == v1::SANDBOX_BACKEND_NATIVE
                       ? v1::SANDBOX_STATE_CREATED
                       : v1::SANDBOX_STATE_WARM);
  SetDetail(handle, "backendNote", choice.note);
  SetDetail(handle, "filenamePolicy", filenames.note);
  handle.set_filename_denies_weakened(filenames.weakened);
  if (spec.has_guest_workdir()) {
    handle.set_working_directory(spec.guest_workdir());
  } else if (!spec.bind_mounts().empty()) {
    handle.set_working_directory(spec.bind_mounts(0).host_path());
  }
  if (!handle.working_directory().empty()) {
    SetDetail(handle, "workingDirectory", handle.working_directory());
  }
}

}  // namespace

BrokerService::BrokerService(BrokerConfig config, LauncherLink launcher)
    : config_(std::move(config)),
      launcher_(std::move(launcher)),
      egress_(*config_.proxy_loop, config_.resolver, *config_.runtime_dir, events_,
              config_.egress_limits, config_.push_credentials.get(), config_.upstream_address,
              config_.metrics, config_.egress_listeners),
      create_guard_(config_.create_guard),
      relay_options_{.stall_limit = config_.exec_stall_limit},
      run_salt_(std::random_device()() ^ (uint64_t{std::random_device()()} << 32)),
      home_dirs_(CurrentHomeDirs()),
      native_env_(policy::DefaultEnvironment(v1::SANDBOX_BACKEND_NATIVE, config_.host_env)),
      none_env_(policy::DefaultEnvironment(v1::SANDBOX_BACKEND_NONE, config_.host_env)) {}

grpc::Status BrokerService::Probe(grpc::ServerContext*, const v1::ProbeRequest*,
                                  v1::ProbeResponse* response) {
  *response->mutable_result() = config_.host.probe;
  response->set_sandbox_enabled(config_.host.sandbox_enabled);
  absl::StatusOr<policy::BackendChoice> dispatch = policy::SelectBackend("", config_.host);
  response->set_dispatch_backend(dispatch.ok() ? dispatch->actual : v1::SANDBOX_BACKEND_NONE);
  response->set_status_line(config_.status_line);
  *response->mutable_microvm() = config_.host.microvm;
  if (config_.host.sandbox_enabled && config_.host.probe.available()) {
    const CreateGuardState guard = AskLauncherNow();
    response->set_launcher_answered(guard.known);
    response->set_launcher_note(
        guard.known ? absl::StrCat("answered at ", config_.launcher_address, " (peer check passed)")
                    : guard.reason);
    response->set_filename_denies_enforced(guard.available);
    response->set_filename_denies_note(
        policy::FilenameEnforcementNote(guard.known, guard.available, guard.reason));
    response->set_resource_limits_enforced(guard.limits_available);
    response->set_resource_limits_note(!guard.known ? absl::StrCat("unknown: ", guard.reason)
                                       : guard.limits_available
                                           ? absl::StrCat("enforced with ", guard.limits_reason)
                                           : absl::StrCat("NOT enforced: ", guard.limits_reason));
  }
  return grpc::Status::OK;
}

grpc::Status BrokerService::Launch(grpc::ServerContext*, const v1::LaunchRequest* request,
                                   v1::SandboxHandle* handle) {
  absl::StatusOr<CheckedLaunch> checked = CheckLaunch(*request);
  if (!checked.ok()) return ToGrpc(checked.status());
  const v1::SandboxSpec& spec = checked->spec;
  const policy::BackendChoice& choice = checked->choice;
  // A taken id is answered before the deny scan and the proxies: the same request again (a
  // client retrying after a lost answer) gets the session's handle, another one ALREADY_EXISTS.
  // sessions_.Create below still decides between two Launches racing for the same id.
  if (absl::StatusOr<v1::SandboxHandle> same = sessions_.SameLaunch(spec, choice.requested);
      same.ok() || !absl::IsNotFound(same.status())) {
    if (same.ok()) *handle = *std::move(same);
    return ToGrpc(same.status());
  }
  // Deny sets are resolved once, at Launch: what exists then is made read-only or hidden
  // for every run of the session.
  const v1::SandboxBackend host_backend = HostBackend(choice.actual);
  absl::StatusOr<SessionPolicy> policy = DecideSessionPolicy(spec, host_backend);
  if (!policy.ok()) return ToGrpc(policy.status());
  FillHandle(spec, choice, policy->filenames, *handle);
  absl::StatusOr<std::string> egress_note = StartEgress(spec, host_backend);
  if (!egress_note.ok()) return ToGrpc(egress_note.status());
  SetDetail(*handle, "egress", *egress_note);
  if (spec.has_push()) {
    SetDetail(*handle, "push",
              absl::StrCat("through the push gateway: ", spec.push().repositories_size(),
                           " repositories; ", config_.push_credentials->Describe(),
                           config_.push_credentials->ReadOnlyEnforced()
                               ? ""
                               : " — the push rule is ADVISORY: the run's credential can push"));
  }
  if (absl::Status created =
          sessions_.Create(spec, *handle, std::move(policy->deny), std::move(policy->guard_plan));
      !created.ok()) {
    // The proxies started here are ours to stop: Start refuses a second set.
    if (host_backend == v1::SANDBOX_BACKEND_NATIVE) egress_.Stop(spec.session_id());
    return ToGrpc(created);
  }
  if (host_backend == v1::SANDBOX_BACKEND_NATIVE) {
    if (absl::Status warm = StartSessionSandbox(spec.session_id()); !warm.ok()) {
      // Destroyed while its sandbox started: that is why, whatever failed first (its proxies'
      // sockets went, its sandbox was stopped), and the Destroy releases what it held.
      if (!sessions_.Get(spec.session_id()).ok()) {
        return ToGrpc(
            absl::AbortedError("sessionId: the session was destroyed while its sandbox started"));
      }
      spdlog::warn("session {} refused: {}", spec.session_id(), std::string(warm.message()));
      (void)DestroySession(spec.session_id(), "its sandbox did not start");
      return ToGrpc(warm);
    }
    absl::StatusOr<v1::SandboxHandle> warm = sessions_.Get(spec.session_id());
    if (warm.ok()) *handle = *warm;
  }
  spdlog::info("session {} launched: backend {} ({}); egress {}", spec.session_id(),
               std::string(policy::BackendName(choice.actual)), choice.note, *egress_note);
  if (policy->filenames.weakened) {
    spdlog::warn("session {}: filename-pattern denies {}", spec.session_id(),
                 policy->filenames.note);
  }
  return grpc::Status::OK;
}

absl::StatusOr<std::string> BrokerService::StartEgress(const v1::SandboxSpec& spec,
                                                       v1::SandboxBackend backend) {
  if (backend != v1::SANDBOX_BACKEND_NATIVE) {
    return std::string("not confined: the none backend has the host's network");
  }
  absl::StatusOr<EgressSummary> egress = egress_.Start(spec);
  if (!egress.ok()) {
    spdlog::warn("session {} refused: egress: {}", spec.session_id(),
                 std::string(egress.status().message()));
    return egress.status();
  }
  return egress->network_enabled
             ? absl::StrCat("proxies on, ", egress->allow_entries, " allow entries")
             : "proxies on, networkEnabled=false: every connection is refused";
}

CreateGuardState BrokerService::CurrentCreateGuard() {
  absl::MutexLock lock(&create_guard_mu_);
  if (!create_guard_.known) {
    create_guard_ =
        CreateGuardStateFrom(ProbeLauncher(*launcher_.stub, std::chrono::milliseconds(2000)));
    if (create_guard_.known) {
      spdlog::info(
          "launcher answered: {}",
          policy::FilenameEnforcementNote(true, create_guard_.available, create_guard_.reason));
    }
  }
  return create_guard_;
}

CreateGuardState BrokerService::AskLauncherNow() {
  CreateGuardState now =
      CreateGuardStateFrom(ProbeLauncher(*launcher_.stub, std::chrono::milliseconds(1000)));
  if (!now.known) {
    const std::string why = LauncherUnreachable(config_.launcher_address);
    if (!why.empty()) now.reason = why;
    return now;
  }
  absl::MutexLock lock(&create_guard_mu_);
  create_guard_ = now;
  return now;
}

std::string BrokerService::NextRunId(const std::string& session_id) {
  return absl::StrFormat("%s-%d-%016x", session_id, run_counter_.fetch_add(1) + 1, run_salt_);
}

grpc::Status BrokerService::Exec(grpc::ServerContext* context, const v1::ExecRequest* request,
                                 grpc::ServerWriter<v1::SandboxEvent>* writer) {
  const absl::Time began = absl::Now();
  std::atomic<BrokerMetrics::ExecOutcome> ended{BrokerMetrics::ExecOutcome::kError};
  grpc::Status status = RunExec(context, request, writer, ended);
  if (request->destroy_session_after() && status.error_code() != grpc::StatusCode::NOT_FOUND) {
    (void)DestroySession(request->session_id(), "its one-shot Exec ended");
  }
  BrokerMetrics::ExecOutcome outcome = ended.load();
  if (outcome == BrokerMetrics::ExecOutcome::kError &&
      status.error_code() == grpc::StatusCode::CANCELLED) {
    outcome = BrokerMetrics::ExecOutcome::kCancelled;
  }
  config_.metrics.ExecEnded(outcome, absl::Now() - began);
  return status;
}

grpc::Status BrokerService::RunExec(grpc::ServerContext* context, const v1::ExecRequest* request,
                                    grpc::ServerWriter<v1::SandboxEvent>* writer,
                                    std::atomic<BrokerMetrics::ExecOutcome>& ended) {
  if (absl::Status valid = policy::CheckExecLimits(*request); !valid.ok()) return ToGrpc(valid);
  const std::string run_id = NextRunId(request->session_id());
  absl::StatusOr<SessionTable::RunStart> start = sessions_.BeginRun(request->session_id(), run_id);
  if (!start.ok()) return ToGrpc(start.status());
  {
    absl::MutexLock lock(&relays_mu_);
    relays_[run_id] = RelayEntry();
  }
  absl::Cleanup unregister = [&] {
    absl::MutexLock lock(&relays_mu_);
    relays_.erase(run_id);
  };
  absl::Cleanup end_run = [&] { sessions_.EndRun(request->session_id(), run_id); };

  absl::StatusOr<v1::LaunchPlan> plan = PlanRun(*request, run_id, *start);
  if (!plan.ok()) return ToGrpc(plan.status());
  if (start->backend == v1::SANDBOX_BACKEND_MICROVM) {
    return RunGuestExec(context, *request, writer, run_id, *plan, ended);
  }
  if (grpc::Status reachable = AwaitLauncher(); !reachable.ok()) return reachable;
  // The run's own events and the session's (proxy refusals) share the stream.
  ExecRelay::Options options = relay_options_;
  options.run_id = run_id;
  // The session's violations are counted where they arise (SessionEgress), once per session.
  options.on_run_event = [this](const v1::SandboxEvent& event) {
    if (event.has_violation()) config_.metrics.Violation(event.violation().action());
  };
  ExecRelay relay(context, writer, options, [&](v1::SandboxEvent& event) {
    event.set_session_id(request->session_id());
    event.set_backend(start->backend);  // the session's actual backend labels every event
    if (event.has_exit()) ended = BrokerMetrics::ExecOutcome::kExit;
    if (event.has_killed()) ended = BrokerMetrics::ExecOutcome::kKilled;
  });
  absl::Cleanup forget_relay = [&] {
    absl::MutexLock lock(&relays_mu_);
    relays_[run_id].relay = nullptr;
  };
  {
    absl::MutexLock lock(&relays_mu_);
    RelayEntry& entry = relays_[run_id];
    entry.relay = &relay;
    if (!entry.cancel.empty()) relay.Cancel(entry.cancel);  // killed while it was being set up
  }
  // Publishing never waits on this client: a full stream drops (and counts) the event.
  const uint64_t subscription = events_.Subscribe(
      request->session_id(), [&relay](const v1::SandboxEvent& event) { relay.Offer(event); });
  absl::Cleanup unsubscribe = [&] { events_.Unsubscribe(request->session_id(), subscription); };
  auto before_last = [&] {
    // Proxy refusals of this run go out before its last event, and none after it.
    if (HostBackend(start->backend) == v1::SANDBOX_BACKEND_NATIVE) egress_.Flush(absl::Seconds(1));
    events_.Unsubscribe(request->session_id(), subscription);
  };

  const ExecRelay::Result result = relay.Run(*launcher_.stub, *plan, before_last);
  return ExecOutcome(context, run_id, result, before_last, relay);
}

absl::StatusOr<v1::LaunchPlan> BrokerService::PlanRun(const v1::ExecRequest& request,
                                                      const std::string& run_id,
                                                      SessionTable::RunStart& start) {
  std::optional<v1::EgressPlan> egress;
  if (HostBackend(start.backend) == v1::SANDBOX_BACKEND_NATIVE) {
    egress = egress_.PlanFor(request.session_id());
    if (!egress.has_value()) {
      return absl::FailedPreconditionError("the session's egress proxies are gone (destroyed?)");
    }
  }
  return ComposeRunPlan(request, run_id, start, std::move(egress));
}

absl::StatusOr<v1::LaunchPlan> BrokerService::ComposeRunPlan(const v1::ExecRequest& request,
                                                             const std::string& run_id,
                                                             SessionTable::RunStart& start,
                                                             std::optional<v1::EgressPlan> egress) {
  policy::PlanInputs inputs;
  inputs.spec = &start.spec;
  inputs.backend = HostBackend(start.backend);
  inputs.exec = &request;
  inputs.run_id = run_id;
  inputs.base_env = inputs.backend == v1::SANDBOX_BACKEND_NATIVE ? native_env_ : none_env_;
  inputs.deny = std::move(start.deny);
  absl::StatusOr<v1::LaunchPlan> plan = policy::BuildLaunchPlan(inputs);
  if (!plan.ok()) return plan.status();
  for (const policy::ForbiddenDir& dir : config_.forbidden_dirs) {
    // Only the broker can tell which parts of the data directory one run may have.
    if (!dir.bindable_below) plan->add_forbidden_dirs(dir.path);
  }
  if (start.create_guard.has_value()) *plan->mutable_create_guard() = *start.create_guard;
  if (start.spec.has_resources()) *plan->mutable_resources() = start.spec.resources();
  if (egress.has_value()) *plan->mutable_egress() = *std::move(egress);
  if (!start.sandbox_id.empty()) {
    // A run in the session's warm sandbox brings only its own fields.
    plan->clear_mounts();
    plan->clear_deny_read_paths();
    plan->clear_deny_write_paths();
    plan->clear_egress();
    plan->clear_create_guard();
    plan->clear_forbidden_dirs();
    plan->clear_resources();
    plan->set_sandbox_id(start.sandbox_id);
  }
  // What the launcher would refuse (or fail to receive), refused here with the same words.
  if (absl::Status valid = policy::CheckPlanLimits(*plan); !valid.ok()) {
    spdlog::warn("run {} refused: {}", run_id, std::string(valid.message()));
    return valid;
  }
  return plan;
}

absl::Status BrokerService::StartSessionSandbox(const std::string& session_id) {
  absl::StatusOr<SessionTable::RunStart> start = sessions_.Plan(session_id);
  if (!start.ok()) return start.status();
  // The sandbox's plan is a run's without the command: the session's mounts, deny sets,
  // egress and create guard, its working directory and base environment.
  v1::ExecRequest none;
  none.set_session_id(session_id);
  none.add_argv("sandbox");
  const std::string sandbox_id = absl::StrCat(NextRunId(session_id), "-sandbox");
  absl::StatusOr<v1::LaunchPlan> plan = PlanRun(none, sandbox_id, *start);
  if (!plan.ok()) return plan.status();
  plan->clear_argv();
  const bool microvm = start->backend == v1::SANDBOX_BACKEND_MICROVM;
  std::string state_dir;
  absl::Cleanup remove_state_dir = [&] {
    if (!state_dir.empty()) config_.microvm_state->RemoveSessionDir(state_dir);
  };
  std::optional<microvm::GuestLayout> layout;
  if (microvm) {
    // The guest's root: the sandbox's own view shared from inside it; then what qemu needs.
    absl::StatusOr<microvm::GuestLayout> made = GuestLayoutOf(*plan);
    if (!made.ok()) return made.status();
    layout = *std::move(made);
    absl::StatusOr<std::string> dir = config_.microvm_state->CreateSessionDir();
    if (!dir.ok()) return dir.status();
    state_dir = *dir;
    AddHypervisorMounts(state_dir, config_.microvm_runtime->HostFiles(), *plan);
  }
  if (grpc::Status reachable = AwaitLauncher(); !reachable.ok()) {
    return absl::UnavailableError(reachable.error_message());
  }
  absl::StatusOr<v1::SandboxLifecycle::Warm> warm = sandboxes_.Start(
      *launcher_.stub, *plan,
      [this, session_id](const std::string& reason) {
        spdlog::error("session {}: its sandbox ended: {}", session_id, reason);
        sessions_.Fail(session_id, reason);
      },
      [this, session_id](const v1::SandboxUsage& usage) { sessions_.SetUsage(session_id, usage); });
  if (!warm.ok()) return warm.status();
  if (microvm) {
    if (absl::Status booted =
            StartSessionGuest(session_id, *start, sandbox_id, state_dir, std::move(*layout));
        !booted.ok()) {
      sandboxes_.Stop(*launcher_.stub, sandbox_id, "its microVM did not start");
      return booted;
    }
    state_dir.clear();  // the guest's now: its session's end removes it
  }
  if (!sessions_.MarkWarm(session_id, sandbox_id, warm->limits())) {
    const std::string guest_dir = StopSessionGuest(session_id);
    sandboxes_.Stop(*launcher_.stub, sandbox_id, "session destroyed while it started");
    if (!guest_dir.empty()) config_.microvm_state->RemoveSessionDir(guest_dir);
    return absl::AbortedError("sessionId: the session was destroyed while its sandbox started");
  }
  spdlog::info("session {}: sandbox {} warm (pid {}; {})", session_id, sandbox_id, warm->pid(),
               warm->limits());
  return absl::OkStatus();
}

grpc::Status BrokerService::AwaitLauncher() {
  // A restarted launcher is reconnected here; a missing one fails fast with a clear error.
  if (launcher_.channel->GetState(true) != GRPC_CHANNEL_READY &&
      !launcher_.channel->WaitForConnected(std::chrono::system_clock::now() +
                                           std::chrono::seconds(3))) {
    std::string why = LauncherUnreachable(config_.launcher_address);
    if (why.empty()) why = absl::StrCat("launcher not reachable at ", config_.launcher_address);
    spdlog::warn("{}", why);
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, why);
  }
  return grpc::Status::OK;
}

grpc::Status BrokerService::ExecOutcome(grpc::ServerContext* context, const std::string& run_id,
                                        const ExecRelay::Result& result,
                                        const std::function<void()>& before_last,
                                        ExecRelay& relay) {
  const grpc::Status& status = result.status;
  if (context->IsCancelled() || result.client_gone) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client");
  }
  if (!result.unparsed.empty()) {
    spdlog::error("run {}: the launcher sent an event with {} not valid UTF-8; run cancelled",
                  run_id, result.unparsed);
    before_last();
    relay.Finish();
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        absl::StrCat("the launcher sent an event whose ", result.unparsed,
                                     " is not valid UTF-8; the run was cancelled"));
  }
  grpc::Status outcome = status;
  // A run cancelled here (Kill or Destroy) before the launcher's first event ends like one
  // killed later: with a killed event, never a bare CANCELLED status.
  const bool killed_here = !result.cancel_reason.empty();
  if (!status.ok() && (result.started || killed_here) && !result.ended &&
      (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
       status.error_code() == grpc::StatusCode::CANCELLED)) {
    // The launcher went away mid-run (restart or crash), dropped a stream nobody read, or the
    // run was cancelled here because its Signal could not be delivered: the run is over.
    before_last();
    v1::SandboxEvent killed;
    if (killed_here) {
      killed.mutable_killed()->set_reason(std::string(kKilledStopped));
      killed.mutable_killed()->set_detail(result.cancel_reason);
    } else {
      killed.mutable_killed()->set_reason(std::string(kKilledLauncherRestart));
      killed.mutable_killed()->set_detail(
          absl::StrCat("launcher connection lost: ", status.error_message()));
      spdlog::warn("run {}: launcher connection lost mid-run", run_id);
    }
    killed.mutable_killed()->set_signal(SIGKILL);
    relay.Push(std::move(killed));
    outcome = grpc::Status::OK;
  } else if (!status.ok() && status.error_code() == grpc::StatusCode::UNAVAILABLE &&
             !result.started) {
    outcome = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                           absl::StrCat("launcher not reachable at ", config_.launcher_address,
                                        ": ", status.error_message()));
  }
  if (!relay.Finish()) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "the client did not read its stream");
  }
  return outcome;
}

int BrokerService::SignalRuns(const std::vector<std::string>& run_ids, int signal,
                              const std::string& reason) {
  int reached = 0;
  for (const std::string& run_id : run_ids) {
    if (guests_.RequestStop(run_id, reason)) {  // a run in a microVM: the broker ends it
      ++reached;
      continue;
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::SignalRequest req;
    req.set_run_id(run_id);
    req.set_signal(signal);
    req.set_reason(std::string(kKilledStopped));  // Kill and Destroy: the caller asked for it
    req.set_detail(reason);
    v1::SignalResponse resp;
    grpc::Status status = launcher_.stub->Signal(&ctx, req, &resp);
    if (status.ok() && resp.delivered()) {
      ++reached;
      continue;
    }
    // Not running in the launcher (yet, or any more), or the launcher did not answer: end the
    // run's call from here, which the launcher answers by killing it.
    absl::MutexLock lock(&relays_mu_);
    auto entry = relays_.find(run_id);
    if (entry != relays_.end() && signal == SIGKILL) {
      if (entry->second.relay != nullptr) {
        entry->second.relay->Cancel(reason);
      } else if (entry->second.cancel.empty()) {
        entry->second.cancel = reason;
      }
      ++reached;
    } else {
      spdlog::warn("run {}: signal not delivered: {}", run_id, status.error_message());
    }
  }
  return reached;
}

grpc::Status BrokerService::Kill(grpc::ServerContext*, const v1::KillRequest* request,
                                 v1::KillResponse* response) {
  if (terminals_.Contains(request->session_id())) {
    const bool ended = EndTerminal(
        request->session_id(), request->reason().empty()
                                   ? std::string("killed by request")
                                   : absl::StrCat("killed: ", policy::CutInput(request->reason())));
    response->set_runs_signalled(ended ? 1 : 0);
    return grpc::Status::OK;
  }
  absl::StatusOr<std::vector<std::string>> runs = sessions_.Runs(request->session_id());
  if (!runs.ok()) return ToGrpc(runs.status());
  // The reason travels in every run's killed event and the logs: bounded, never refused (a Kill
  // with a long reason still kills).
  const std::string reason = request->reason().empty()
                                 ? "killed by request"
                                 : absl::StrCat("killed: ", policy::CutInput(request->reason()));
  response->set_runs_signalled(SignalRuns(*runs, SIGKILL, reason));
  return grpc::Status::OK;
}

void BrokerService::DestroyAllSessions(const std::string& why) {
  for (const v1::SandboxHandle& handle : sessions_.List()) {
    (void)DestroySession(handle.session_id(), why, why);
  }
  for (const std::string& id : terminals_.Ids()) EndTerminal(id, why);
}

bool BrokerService::EndTerminal(const std::string& id, const std::string& why) {
  if (!terminals_.Contains(id)) return false;
  // The terminal's id is its run id at the launcher: the shell and its session get SIGKILL and
  // the `ended` event says why.
  // Threat: a client that stopped reading blocks every write on the way, and the launcher's
  // relay with it: the signal waits unseen. Then both calls are cancelled, which unblocks them
  // and hangs the terminal up.
  if (SignalRuns({id}, SIGKILL, why) == 0 || !terminals_.AwaitGone(id, absl::Seconds(2))) {
    terminals_.HangUp(id);
  }
  return true;
}

absl::StatusOr<v1::SandboxHandle> BrokerService::DestroySession(const std::string& session_id,
                                                                const std::string& why,
                                                                const std::string& kill_detail) {
  std::string sandbox_id;
  auto destroyed = sessions_.BeginDestroy(session_id, &sandbox_id);
  if (!destroyed.ok()) return destroyed.status();
  SignalRuns(destroyed->second, SIGKILL, kill_detail);
  // The guest first (its hypervisor runs in the sandbox); its files once nothing in the sandbox
  // can write there any more.
  const std::string guest_dir = StopSessionGuest(session_id);
  // Ends with every process in it before Destroy returns.
  if (!sandbox_id.empty()) sandboxes_.Stop(*launcher_.stub, sandbox_id, kill_detail);
  if (!guest_dir.empty()) config_.microvm_state->RemoveSessionDir(guest_dir);
  egress_.Stop(session_id);
  sessions_.EndDestroy(session_id);
  spdlog::info("session {} destroyed: {}", session_id, why);
  return destroyed->first;
}

grpc::Status BrokerService::Destroy(grpc::ServerContext*, const v1::SessionRequest* request,
                                    v1::SandboxHandle* handle) {
  if (std::optional<v1::SandboxHandle> terminal = terminals_.Get(request->session_id())) {
    EndTerminal(request->session_id(), "destroyed by request");
    *handle = *std::move(terminal);
    handle->set_state(v1::SANDBOX_STATE_DESTROYED);
    return grpc::Status::OK;
  }
  absl::StatusOr<v1::SandboxHandle> destroyed = DestroySession(request->session_id(), "by request");
  if (!destroyed.ok()) return ToGrpc(destroyed.status());
  *handle = *std::move(destroyed);
  return grpc::Status::OK;
}

grpc::Status BrokerService::GetSession(grpc::ServerContext*, const v1::SessionRequest* request,
                                       v1::SandboxHandle* handle) {
  absl::StatusOr<v1::SandboxHandle> found = sessions_.Get(request->session_id());
  if (!found.ok()) {
    if (std::optional<v1::SandboxHandle> terminal = terminals_.Get(request->session_id())) {
      *handle = *std::move(terminal);
      return grpc::Status::OK;
    }
    return ToGrpc(found.status());
  }
  *handle = *found;
  return grpc::Status::OK;
}

grpc::Status BrokerService::ListSessions(grpc::ServerContext*, const v1::ListSessionsRequest*,
                                         v1::ListSessionsResponse* response) {
  for (v1::SandboxHandle& handle : sessions_.List()) *response->add_sessions() = std::move(handle);
  for (v1::SandboxHandle& handle : terminals_.List()) *response->add_sessions() = std::move(handle);
  return grpc::Status::OK;
}

}  // namespace ccsandbox::broker
