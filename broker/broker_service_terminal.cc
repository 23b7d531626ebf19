// BrokerService's Terminal RPC (spec: "Server-hosted terminal"): the backend by the terminal's
// own rule, the fixed terminal profile, and the PTY's bytes relayed between the client and the
// launcher for as long as both calls last.
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "base/paths.h"
#include "base/real_host_view.h"
#include "broker/broker_service.h"
#include "broker/deny_scan.h"
#include "broker/spec_paths.h"
#include "policy/plan/input_limits.h"
#include "policy/plan/launch_plan.h"
#include "policy/plan/path_spellings.h"
#include "policy/plan/spec_validation.h"
#include "policy/plan/terminal_profile.h"
#include "proto/grpc_status.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {
namespace {

// How long a client has, once the shell's end was sent, to close its side of the call.
constexpr absl::Duration kCloseGrace = absl::Seconds(5);

absl::Status CheckDirectory(absl::string_view field, const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(field, ": ", path, " is not an existing directory"));
  }
  return absl::OkStatus();
}

std::string Lookup(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

}  // namespace

absl::StatusOr<v1::LaunchPlan> BrokerService::PlanTerminal(const v1::TerminalOpen& open,
                                                           const policy::BackendChoice& choice,
                                                           const std::string& id) {
  policy::TerminalInputs inputs;
  inputs.backend = choice.actual;
  inputs.run_id = id;
  inputs.session_id = id;
  inputs.home = Lookup(config_.host_env, "HOME");
  if (absl::Status s = CheckNormalizedAbsolute("HOME (the broker's)", inputs.home); !s.ok()) {
    return absl::FailedPreconditionError(s.message());
  }
  if (absl::Status s = CheckDirectory("HOME (the broker's)", inputs.home); !s.ok()) return s;
  inputs.workdir = open.working_directory().empty() ? inputs.home : open.working_directory();
  if (absl::Status s = CheckDirectory("workingDirectory", inputs.workdir); !s.ok()) return s;
  inputs.argv.assign(open.argv().begin(), open.argv().end());
  if (inputs.argv.empty()) {
    const std::string shell = Lookup(config_.host_env, "SHELL");
    inputs.argv.push_back(shell.empty() || shell[0] != '/' ? "/bin/bash" : shell);
  }
  inputs.term = open.term();
  inputs.base_env = policy::DefaultEnvironment(choice.actual, config_.host_env);
  if (choice.actual != v1::SANDBOX_BACKEND_NATIVE) return policy::BuildTerminalPlan(inputs);

  // Threat: a spelling through a symlink ($HOME itself a link, a workdir linking to $HOME)
  // would bind the tree where no secret's spelling lands. Everything below works on what each
  // path resolves to now, and the launcher binds exactly that object (dev/ino).
  for (const auto& [field, path] :
       {std::pair{"HOME", &inputs.home}, std::pair{"workingDirectory", &inputs.workdir}}) {
    char resolved[PATH_MAX];
    if (realpath(path->c_str(), resolved) == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(field, ": ", *path, " does not resolve"));
    }
    if (absl::Status s = policy::CheckResolvedBind(field, *path, resolved, config_.forbidden_dirs);
        !s.ok()) {
      return absl::FailedPreconditionError(s.message());
    }
    struct stat st;
    if (lstat(resolved, &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(field, ": ", *path, " changed while it was checked"));
    }
    *path = resolved;
    inputs.bind_ids[resolved] = {static_cast<uint64_t>(st.st_dev),
                                 static_cast<uint64_t>(st.st_ino)};
  }
  // The same decisions as a writable native session over $HOME and the working directory: the
  // deny scan of both trees (secrets at any depth, sockets hidden, what the host runs or trusts
  // made read-only and guarded against creation: the boundary rules hold in a terminal too) —
  // without the dispatch-only filename patterns (.env, *.key, *.pem).
  v1::SandboxSpec spec;
  spec.set_session_id(id);
  spec.set_mode("chat");
  spec.mutable_write_deny_patterns();  // explicitly none
  for (const std::string& mount : policy::TerminalMounts(inputs.home, inputs.workdir)) {
    v1::SandboxBindMount* bind = spec.add_bind_mounts();
    bind->set_host_path(mount);
    bind->set_guest_path(mount);
  }
  if (absl::Status valid = policy::ValidateSpec(spec, v1::SANDBOX_BACKEND_NATIVE); !valid.ok()) {
    return valid;
  }
  if (absl::Status valid = CheckSpecPaths(spec, v1::SANDBOX_BACKEND_NATIVE, config_.forbidden_dirs);
      !valid.ok()) {
    return valid;
  }
  absl::StatusOr<SessionPolicy> decided = DecideSessionPolicy(spec, v1::SANDBOX_BACKEND_NATIVE);
  if (!decided.ok()) return decided.status();
  inputs.deny = std::move(decided->deny);
  inputs.create_guard = std::move(decided->guard_plan);
  // The spec's list of $HOME's secrets, whether the broker's home directories include it or not.
  for (const std::string& path :
       policy::AllSpellings(policy::TerminalSecretPaths(inputs.home), RealPathResolver())) {
    inputs.deny.read.push_back(path);
  }
  for (const policy::ForbiddenDir& dir : config_.forbidden_dirs) {
    if (!dir.bindable_below) inputs.forbidden_dirs.push_back(dir.path);
  }
  absl::StatusOr<v1::LaunchPlan> plan = policy::BuildTerminalPlan(inputs);
  if (plan.ok()) {
    if (absl::Status s = policy::CheckPlanLimits(*plan); !s.ok()) return s;
  }
  return plan;
}

grpc::Status BrokerService::Terminal(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::TerminalOutput, v1::TerminalInput>* stream) {
  v1::TerminalInput first;
  if (!stream->Read(&first)) return grpc::Status::CANCELLED;
  if (!first.has_open()) {
    return ToGrpc(absl::InvalidArgumentError("open: a terminal's first message is its open"));
  }
  const v1::TerminalOpen& open = first.open();
  if (absl::Status valid = policy::CheckTerminalOpen(open); !valid.ok()) return ToGrpc(valid);
  absl::StatusOr<policy::BackendChoice> choice =
      policy::SelectTerminalBackend(open.backend(), config_.terminal_default_backend, config_.host);
  if (!choice.ok()) {
    spdlog::warn("terminal refused: {}", std::string(choice.status().message()));
    return ToGrpc(choice.status());
  }
  if (choice->actual == v1::SANDBOX_BACKEND_MICROVM && config_.microvm_runtime == nullptr) {
    return ToGrpc(absl::FailedPreconditionError(
        "backend: microvm: this broker has no microVM runtime; never run on the host in its "
        "place"));
  }
  if (choice->requested == v1::SANDBOX_BACKEND_UNSPECIFIED &&
      choice->actual == v1::SANDBOX_BACKEND_NATIVE &&
      config_.terminal_default_backend == "microvm") {
    spdlog::warn("terminal: {}", choice->note);  // the degraded default, said out loud
  }
  if (choice->actual == v1::SANDBOX_BACKEND_NATIVE && !config_.tcp_listener.empty()) {
    // Threat: the terminal profile shares the host's network, and so reaches an
    // unauthenticated TCP listener of this broker, which opens host shells for anyone.
    return ToGrpc(absl::FailedPreconditionError(absl::StrCat(
        "backend: a native terminal shares the host's network, and this broker listens "
        "unauthenticated on ",
        config_.tcp_listener, " (--allow-tcp-listen): it would open a host shell from inside")));
  }
  if (!terminals_.Reserve(config_.max_terminals)) {
    return ToGrpc(absl::ResourceExhaustedError(absl::StrCat(
        "terminal: ", config_.max_terminals, " are open (--max-terminals); close one first")));
  }
  absl::Cleanup release = [this] { terminals_.Unreserve(); };
  const std::string id = NextRunId("term");
  if (choice->actual == v1::SANDBOX_BACKEND_MICROVM) {
    return MicrovmTerminal(context, stream, open, *choice, id);
  }
  absl::StatusOr<v1::LaunchPlan> plan = PlanTerminal(open, *choice, id);
  if (!plan.ok()) {
    spdlog::warn("terminal {} refused: {}", id, std::string(plan.status().message()));
    return ToGrpc(plan.status());
  }
  if (grpc::Status reachable = AwaitLauncher(); !reachable.ok()) return reachable;

  grpc::ClientContext call_context;
  std::unique_ptr<grpc::ClientReaderWriterInterface<v1::LauncherTerminalInput, v1::TerminalOutput>>
      call = launcher_.stub->Terminal(&call_context);
  v1::LauncherTerminalInput start;
  *start.mutable_start()->mutable_plan() = *plan;
  *start.mutable_start()->mutable_size() = open.size();
  if (!call->Write(start)) {
    return ToGrpc(absl::UnavailableError(
        absl::StrCat("the launcher at ", config_.launcher_address, " took no terminal")));
  }
  spdlog::info("terminal {} opening: backend {} ({}), workdir {}", id,
               std::string(policy::BackendName(choice->actual)), choice->note, plan->workdir());

  absl::Notification input_done;
  std::thread input([&] {
    bool told_bad_input = false;  // one log line per terminal, however many come
    v1::TerminalInput in;
    while (stream->Read(&in)) {
      v1::LauncherTerminalInput forward;
      switch (in.input_case()) {
        case v1::TerminalInput::kData:
          if (in.data().size() > kMaxTerminalData) {
            // Keystrokes come in small pieces; a huge one only fills both daemons' memory.
            spdlog::warn("terminal {}: a data message of {} bytes (at most {}): hung up", id,
                         in.data().size(), kMaxTerminalData);
            context->TryCancel();
            continue;
          }
          forward.set_data(in.data());
          break;
        case v1::TerminalInput::kResize:
          if (!policy::ValidTerminalSize(in.resize())) {
            if (!told_bad_input) spdlog::warn("terminal {}: bad resize ignored", id);
            told_bad_input = true;
            continue;
          }
          *forward.mutable_resize() = in.resize();
          break;
        case v1::TerminalInput::kSignal:
          if (!policy::IsTerminalSignal(in.signal())) {
            if (!told_bad_input) spdlog::warn("terminal {}: signal {} ignored", id, in.signal());
            told_bad_input = true;
            continue;
          }
          forward.set_signal(in.signal());
          break;
        default:
          continue;  // a second open means nothing
      }
      if (!call->Write(forward)) break;
    }
    // The client is gone or done: the launcher hangs the terminal up.
    call->WritesDone();
    input_done.Notify();
  });
  absl::Cleanup join = [&] {
    if (!input_done.WaitForNotificationWithTimeout(kCloseGrace)) context->TryCancel();
    input.join();
  };

  bool opened = false;
  std::optional<TerminalTable::Entry> listed;  // before call_context goes: its hang-up uses it
  v1::TerminalOutput out;
  while (call->Read(&out)) {
    if (out.has_opened() && !opened) {
      opened = true;
      v1::SandboxHandle* handle = out.mutable_opened();
      handle->set_session_id(id);
      handle->set_requested_backend(choice->requested);
      handle->set_backend(choice->actual);  // the truth, never what was asked for
      auto& details = *handle->mutable_details()->mutable_fields();
      details["backendNote"].set_string_value(choice->note);
      details["kind"].set_string_value("terminal");
      // The hang-up cancels both calls: a write blocked on either side returns.
      listed.emplace(terminals_.Add(*handle, [&call_context, context] {
        call_context.TryCancel();
        context->TryCancel();
      }));
    }
    if (out.has_ended()) {
      out.mutable_ended()->set_session_id(id);
      out.mutable_ended()->set_backend(choice->actual);
    }
    if (out.has_event()) {
      out.mutable_event()->set_session_id(id);
      out.mutable_event()->set_backend(choice->actual);
      if (out.event().has_violation()) config_.metrics.Violation(out.event().violation().action());
    }
    if (!stream->Write(out)) {
      call_context.TryCancel();  // the client stopped taking output: end the terminal
      break;
    }
  }
  const grpc::Status status = call->Finish();
  spdlog::info("terminal {} closed: {}", id,
               status.ok() ? std::string("ok") : status.error_message());
  if (!opened && !status.ok()) return status;
  return grpc::Status::OK;
}

}  // namespace ccsandbox::broker
