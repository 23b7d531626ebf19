#include "launcher/launcher_service.h"

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <set>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/event_outbox.h"
#include "base/kill_cause.h"
#include "base/real_host_view.h"
#include "launcher/cgroups/usage_sampler.h"
#include "launcher/create_guard/notify_channel.h"
#include "launcher/create_guard/supervisor.h"
#include "launcher/run_environment.h"
#include "launcher/run_supervisor.h"
#include "launcher/seccomp_baseline.h"
#include "launcher/shim/shim_args.h"
#include "launcher/shim_plan.h"
#include "launcher/usage_proto.h"
#include "policy/plan/bwrap_argv.h"
#include "policy/plan/create_guard_plan.h"
#include "policy/plan/input_limits.h"
#include "policy/plan/plan_validation.h"
#include "policy/plan/trusted_names.h"
#include "policy/violations/dedup.h"
#include "policy/violations/parser.h"
#include "proto/grpc_status.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::launcher {
namespace {

// How a native run's bind sources are opened and staged, and what they may not be.
StageOptions StageOptionsFor(const LauncherConfig& config, const v1::LaunchPlan& plan,
                             const std::optional<Identity>& identity, bool root_caller) {
  StageOptions stage;
  stage.open_as = root_caller ? std::nullopt : identity;
  stage.idmap_userns_fd = root_caller ? config.idmap_userns.get() : -1;
  stage.stage_dir = config.socket_dir;  // covered by a tmpfs in the run's own namespace
  stage.forbidden = policy::ControlPlaneDirs();
  stage.forbidden.push_back({config.socket_dir, "the launcher's socket directory"});
  for (const std::string& dir : config.own_dirs) {
    stage.forbidden.push_back({dir, "the directory of the launcher's own programs"});
  }
  stage.socket_forbidden = stage.forbidden;
  for (const std::string& dir : plan.forbidden_dirs()) {
    stage.forbidden.push_back({dir, "a directory of the broker's control plane"});
  }
  stage.clone = geteuid() == 0;
  return stage;
}

// The none backend: the command itself, found on the run's PATH, unwrapped.
absl::Status AddUnwrappedCommand(const v1::LaunchPlan& plan,
                                 const std::map<std::string, std::string>& env, ProcessSpec& spec) {
  auto path = env.find("PATH");
  std::optional<std::string> exe =
      FindExecutable(plan.argv(0), path == env.end() ? "/usr/bin:/bin" : path->second);
  if (!exe.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("argv: command '", plan.argv(0), "' not found on the run's PATH"));
  }
  spec.executable = *exe;
  spec.argv.assign(plan.argv().begin(), plan.argv().end());
  spec.cwd = plan.workdir();
  return absl::OkStatus();
}

// Runs right before the run's last event: joins the create guard and, when the sandbox never
// started, says so.
std::function<void()> JoinGuardHook(std::unique_ptr<CreateSupervisor>& guard, GrpcSink& sink,
                                    const v1::LaunchPlan& plan) {
  return [&guard, &sink, &plan] {
    guard->Join();
    const bool never_started = guard->never_started();
    guard.reset();
    if (never_started && plan.sandbox_id().empty()) {
      spdlog::warn("run {}: the sandbox did not start (bwrap or the shim failed)", plan.run_id());
      v1::SandboxEvent event;
      event.mutable_error()->set_message(
          "the sandbox did not start: bwrap or the shim failed before the command ran "
          "(its stderr above says why); nothing of the command ran");
      sink.Emit(event);
    } else if (never_started) {
      spdlog::warn("run {}: the command did not start in its sandbox", plan.run_id());
      v1::SandboxEvent event;
      event.mutable_error()->set_message(
          "the command did not start: its create guard could not be applied, or the session's "
          "sandbox ended first (its stderr above, or the killed reason, says which)");
      sink.Emit(event);
    }
  };
}

// Supervises the started run to its end, then drains its events to the broker: CANCELLED
// when the broker cancelled the run or did not take every event.
grpc::Status SuperviseToEnd(const v1::LaunchPlan& plan, std::unique_ptr<SupervisedProcess>& process,
                            RunControl& control, absl::Duration stall_limit, GrpcSink& sink,
                            std::function<std::optional<CgroupUsage>()> usage) {
  SuperviseOptions options;
  if (usage) {
    // Read on every wake-up of the supervisor: the pids check samples the high-water mark too.
    auto sampler = std::make_shared<UsageSampler>(std::move(usage));
    // Once now, as the command has just started: a run shorter than one wake-up still counts
    // the processes it had (a reused Exec cgroup has no kernel mark of its own).
    (void)sampler->Sample();
    options.usage = [sampler]() -> std::optional<v1::SandboxUsage> {
      std::optional<CgroupUsage> read = sampler->Sample();
      if (!read.has_value()) return std::nullopt;
      return UsageProto(*read);
    };
    options.pids_limit_hit = [sampler] {
      std::optional<CgroupUsage> read = sampler->Sample();
      return read.has_value() && read->pids_max_hits > 0;
    };
  }
  options.stdin_data = plan.stdin();
  options.timeout = std::chrono::milliseconds(plan.timeout_ms());
  options.report_violations = plan.backend() == v1::SANDBOX_BACKEND_NATIVE;
  options.stall_limit = absl::ToChronoMilliseconds(stall_limit);
  RunOutcome outcome = Supervise(*process, control, options, sink);
  spdlog::info("run {} ended: {}", plan.run_id(),
               outcome == RunOutcome::kExited   ? "exited"
               : outcome == RunOutcome::kKilled ? "killed"
                                                : "cancelled by the broker; process group killed");
  process.reset();  // reaped already; its pipes go now, not after the stream has drained
  sink.Release();   // a guard callback still waiting for room returns before the guard is joined
  if (outcome == RunOutcome::kCancelled || !sink.Finish()) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "run cancelled");
  }
  return grpc::Status::OK;
}

}  // namespace

absl::StatusOr<std::optional<Identity>> IdentityFor(uid_t peer_uid) {
  const uid_t self = geteuid();
  if (self != 0) {
    if (peer_uid != self) {
      return absl::FailedPreconditionError(
          absl::StrCat("the launcher runs as uid ", self, " and cannot run commands as uid ",
                       peer_uid, "; run it as root or as the broker's uid"));
    }
    return std::optional<Identity>();
  }
  if (peer_uid == 0) return std::optional<Identity>();
  Identity identity;
  identity.uid = peer_uid;
  identity.gid = peer_uid;
  std::vector<char> buf(16384);
  passwd pw;
  passwd* found = nullptr;
  if (getpwuid_r(peer_uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    identity.gid = pw.pw_gid;
    int count = 64;
    std::vector<gid_t> groups(count);
    if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &count) < 0) {
      groups.resize(count);
      getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &count);
    }
    groups.resize(count);
    identity.groups = groups;
  }
  return std::optional<Identity>(identity);
}

LauncherService::LauncherService(const LauncherConfig& config, RunRegistry& registry,
                                 uid_t peer_uid)
    : config_(config), registry_(registry), peer_uid_(peer_uid) {}

grpc::Status LauncherService::Probe(grpc::ServerContext*, const v1::LauncherProbeRequest*,
                                    v1::LauncherProbeResponse* response) {
  response->set_bwrap_path(config_.bwrap_path);
  utsname uts;
  if (uname(&uts) == 0) response->set_kernel_release(uts.release);
  response->set_launcher_uid(geteuid());
  for (const std::string& dir : config_.system_ro_dirs) response->add_system_ro_dirs(dir);
  response->set_create_guard_available(config_.create_guard_available);
  response->set_create_guard_reason(config_.create_guard_reason);
  response->set_resource_limits_available(config_.resources.cgroups.has_value());
  response->set_resource_limits_reason(config_.resources.reason);
  *response->mutable_resource_defaults() = config_.resources.policy.defaults;
  *response->mutable_resource_ceilings() = config_.resources.policy.ceilings;
  return grpc::Status::OK;
}

absl::StatusOr<ProcessSpec> LauncherService::BuildProcessSpec(const v1::LaunchPlan& plan,
                                                              SpawnFds& fds, bool warm) const {
  absl::StatusOr<std::optional<Identity>> identity = IdentityFor(peer_uid_);
  if (!identity.ok()) return identity.status();
  absl::StatusOr<std::map<std::string, std::string>> env = RunEnvironment(plan);
  if (!env.ok()) return env.status();
  ProcessSpec spec;
  spec.identity = *identity;
  for (const auto& [name, value] : *env) spec.envp.push_back(absl::StrCat(name, "=", value));
  absl::Status completed = plan.backend() == v1::SANDBOX_BACKEND_NATIVE
                               ? WrapInBwrap(plan, *identity, spec, fds, warm)
                               : AddUnwrappedCommand(plan, *env, spec);
  if (!completed.ok()) return completed;
  return spec;
}

absl::Status LauncherService::WrapInBwrap(const v1::LaunchPlan& plan,
                                          const std::optional<Identity>& identity,
                                          ProcessSpec& spec, SpawnFds& fds, bool warm) const {
  if (config_.bwrap_path.empty()) {
    return absl::FailedPreconditionError(
        "bwrap not found on PATH; install: apt-get install bubblewrap socat");
  }
  // One fresh BPF fd per run: bwrap reads it to EOF. No filter, no run. With the create guard,
  // set-id modes go to its supervisor (refused and reported there).
  absl::StatusOr<UniqueFd> bpf = SealedProgramFd(
      plan.has_create_guard() ? config_.guarded_seccomp_program : config_.seccomp_program);
  if (!bpf.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot build the seccomp baseline: ", bpf.status().message()));
  }
  fds.seccomp = std::move(*bpf);
  spec.inherit_fds.push_back(fds.seccomp.get());
  policy::BwrapConfig bwrap{config_.bwrap_path, config_.system_ro_dirs, fds.seccomp.get(),
                            config_.shim_path};
  // Never host root inside: a root caller's sandbox runs as the unprivileged sandbox uid.
  const bool root_caller = geteuid() == 0 && peer_uid_ == 0;
  if (root_caller) {
    spec.identity = Identity{config_.root_sandbox_uid, config_.root_sandbox_gid, {}};
    bwrap.inside_root = true;
  }
  if (absl::Status joined = JoinSessionCgroup(plan, spec, fds); !joined.ok()) return joined;
  const StageOptions stage = StageOptionsFor(config_, plan, identity, root_caller);
  absl::StatusOr<BindStage> staged = BindStage::Build(plan, config_.shim_path, stage);
  if (!staged.ok()) return staged.status();
  fds.stage = *std::move(staged);
  bwrap.sources = fds.stage->sources();
  absl::StatusOr<ShimArgs> shim;
  if (warm) {
    absl::StatusOr<int> init_channel = OpenInitChannel(plan, spec, fds);
    if (!init_channel.ok()) return init_channel.status();
    shim = ShimArgsFor(plan, std::optional<int>(kPerExecGuardChannel));
    if (shim.ok()) shim->init_fd = *init_channel;
    bwrap.warm_init = true;
  } else {
    absl::StatusOr<std::optional<int>> shim_channel = OpenCreateGuardChannel(plan, spec, fds);
    if (!shim_channel.ok()) return shim_channel.status();
    shim = ShimArgsFor(plan, *shim_channel);
  }
  if (!shim.ok()) return shim.status();
  bwrap.shim_args = RenderShimArgs(*shim);
  absl::StatusOr<std::vector<std::string>> argv =
      policy::RenderBwrapArgv(plan, bwrap, RealHostView());
  if (!argv.ok()) return argv.status();
  // bwrap's own "Exceeded maximum number of arguments" or execve's E2BIG, said clearly.
  if (absl::Status fits =
          policy::CheckBwrapArgv(*argv, spec.envp, static_cast<size_t>(sysconf(_SC_ARG_MAX)));
      !fits.ok()) {
    return fits;
  }
  if (stage.clone) {  // after rendering: it staged the deny-write sources too
    spec.stage_dir = stage.stage_dir;
    spec.staged = fds.stage->staged();
  }
  spec.executable = config_.bwrap_path;
  spec.argv = std::move(*argv);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<int>> LauncherService::OpenCreateGuardChannel(
    const v1::LaunchPlan& plan, ProcessSpec& spec, SpawnFds& fds) const {
  if (!plan.has_create_guard()) return std::optional<int>();
  // Never run a plan that needs the guard without it: refuse instead.
  if (!config_.create_guard_available) {
    return absl::FailedPreconditionError(
        absl::StrCat("createGuard: this launcher cannot enforce filename-pattern denies at "
                     "creation time: ",
                     config_.create_guard_reason));
  }
  absl::StatusOr<std::pair<UniqueFd, UniqueFd>> channel = NotifyChannelPair();
  if (!channel.ok()) return channel.status();
  fds.guard_launcher = std::move(channel->first);
  fds.guard_shim = std::move(channel->second);
  spec.inherit_fds.push_back(fds.guard_shim.get());
  return std::optional<int>(fds.guard_shim.get());
}

absl::Status LauncherService::JoinSessionCgroup(const v1::LaunchPlan& plan, ProcessSpec& spec,
                                                SpawnFds& fds) const {
  const ResourceLimitsConfig& resources = config_.resources;
  if (!resources.cgroups.has_value()) {
    // Never run with limits asked for and not enforced.
    if (plan.has_resources()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "resources: this launcher cannot enforce resource limits: ", resources.reason));
    }
    fds.limits = absl::StrCat("no resource limits: ", resources.reason);
    return absl::OkStatus();
  }
  absl::StatusOr<CgroupLimits> limits =
      EffectiveLimits(plan.has_resources() ? &plan.resources() : nullptr, resources.policy);
  if (!limits.ok()) return limits.status();
  absl::StatusOr<PooledCgroup> cgroup = resources.pool->Take();
  if (!cgroup.ok()) return cgroup.status();
  if (absl::Status set = (*cgroup)->SetLimits(*limits); !set.ok()) return set;
  spec.cgroup_procs = (*cgroup)->ProcsFiles();
  fds.cgroup = *std::move(cgroup);
  fds.limits = DescribeLimits(*limits);
  return absl::OkStatus();
}

absl::StatusOr<int> LauncherService::OpenInitChannel(const v1::LaunchPlan& plan, ProcessSpec& spec,
                                                     SpawnFds& fds) const {
  // Never run a plan that needs the guard without it: refuse instead.
  if (plan.has_create_guard() && !config_.create_guard_available) {
    return absl::FailedPreconditionError(
        absl::StrCat("createGuard: this launcher cannot enforce filename-pattern denies at "
                     "creation time: ",
                     config_.create_guard_reason));
  }
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return absl::ResourceExhaustedError(absl::StrCat("socketpair: ", strerror(errno)));
  }
  fds.init_launcher = UniqueFd(pair[0]);
  fds.init_shim = UniqueFd(pair[1]);
  spec.inherit_fds.push_back(fds.init_shim.get());
  return fds.init_shim.get();
}

absl::StatusOr<ProcessSpec> LauncherService::AdmitRun(const v1::LaunchPlan& plan, SpawnFds& fds,
                                                      bool warm, bool terminal) const {
  policy::PlanLimits limits;
  if (!config_.socket_dir.empty()) limits.forbidden_dirs.push_back(config_.socket_dir);
  limits.sandbox_start = warm;
  limits.terminal = terminal;
  absl::Status valid = policy::ValidatePlan(plan, limits);
  if (valid.ok() && plan.has_resources() && plan.backend() != v1::SANDBOX_BACKEND_NATIVE) {
    valid = absl::InvalidArgumentError(
        "resources: only the native backend's sandboxes are limited; the none backend runs "
        "unconfined");
  }
  absl::StatusOr<ProcessSpec> spec =
      valid.ok() ? BuildProcessSpec(plan, fds, warm) : absl::StatusOr<ProcessSpec>(valid);
  if (!spec.ok()) {
    spdlog::warn("run {} from uid {} refused: {}", plan.run_id(), peer_uid_,
                 std::string(spec.status().message()));
  }
  return spec;
}

grpc::Status LauncherService::Run(grpc::ServerContext* context, const v1::LaunchPlan* plan,
                                  grpc::ServerWriter<v1::SandboxEvent>* writer) {
  if (!plan->sandbox_id().empty()) return RunInSandbox(context, plan, writer);
  SpawnFds fds;
  absl::StatusOr<ProcessSpec> spec = AdmitRun(*plan, fds, /*warm=*/false);
  if (!spec.ok()) return ToGrpc(spec.status());
  absl::StatusOr<RegisteredRun> run = registry_.Register(plan->run_id(), peer_uid_);
  if (!run.ok()) return ToGrpc(run.status());
  GrpcSink sink(context, writer, *plan, config_.stream_stall_limit);
  EmitStarting(*plan, sink);

  absl::StatusOr<std::unique_ptr<SandboxProcess>> process = SandboxProcess::Spawn(*spec);
  if (!process.ok()) {
    spdlog::error("run {}: {}", plan->run_id(), std::string(process.status().message()));
    return ToGrpc(process.status());
  }
  fds.guard_shim.Reset();  // only the shim holds its end now
  fds.seccomp.Reset();
  const pid_t pid = (*process)->pid();
  // fds.cgroup lives to the end of this call: killed and removed after the run.
  std::function<std::optional<CgroupUsage>()> usage;
  if (const Cgroup* cgroup = fds.cgroup.get(); cgroup != nullptr) {
    usage = [cgroup]() -> std::optional<CgroupUsage> {
      absl::StatusOr<CgroupUsage> read = cgroup->Usage();
      return read.ok() ? std::optional<CgroupUsage>(*read) : std::nullopt;
    };
  }
  return SuperviseStarted(*plan, *plan, *std::move(process), pid, std::move(fds.guard_launcher),
                          run->control(), sink, std::move(usage));
}

grpc::Status LauncherService::SuperviseStarted(const v1::LaunchPlan& run,
                                               const v1::LaunchPlan& sandbox,
                                               std::unique_ptr<SupervisedProcess> process,
                                               pid_t pid, UniqueFd guard_channel,
                                               RunControl& control, GrpcSink& sink,
                                               std::function<std::optional<CgroupUsage>()> usage) {
  std::unique_ptr<CreateSupervisor> guard;
  if (sandbox.has_create_guard()) {
    absl::StatusOr<std::unique_ptr<CreateSupervisor>> started =
        StartCreateGuard(sandbox, run.run_id(), std::move(guard_channel), sink);
    if (!started.ok()) {
      // The shim waits for nobody: without our end it fails and the command never starts.
      spdlog::error("run {}: create guard: {}", run.run_id(),
                    std::string(started.status().message()));
      process->SignalGroup(SIGKILL);
      return ToGrpc(started.status());
    }
    guard = *std::move(started);
    // Joined before the last event: every callback has run, and it is known whether the
    // command ever started (a bwrap or shim failure is not the supervisor's death).
    sink.BeforeLastEvent(JoinGuardHook(guard, sink, run));
  }
  v1::SandboxEvent ready;
  ready.mutable_ready()->set_pid(pid);
  sink.Emit(ready);
  spdlog::info("run {} started: uid {}, backend {}, pid {}{}", run.run_id(), peer_uid_,
               run.backend() == v1::SANDBOX_BACKEND_NATIVE ? "native" : "none", pid,
               run.sandbox_id().empty() ? "" : absl::StrCat(", in sandbox ", run.sandbox_id()));
  return SuperviseToEnd(run, process, control, config_.stream_stall_limit, sink, std::move(usage));
}

absl::StatusOr<std::unique_ptr<CreateSupervisor>> LauncherService::StartCreateGuard(
    const v1::LaunchPlan& plan, const std::string& run_id, UniqueFd channel,
    EventSink& sink) const {
  CreateSupervisor::Options options;
  options.deny_patterns.assign(plan.create_guard().deny_patterns().begin(),
                               plan.create_guard().deny_patterns().end());
  // The standard list always holds, whatever the plan says; the plan can only add to it.
  options.trusted_names = policy::StandardTrustedNameRules();
  options.trusted_names.insert(options.trusted_names.end(),
                               plan.create_guard().trusted_names().begin(),
                               plan.create_guard().trusted_names().end());
  options.protected_paths.assign(plan.create_guard().protected_paths().begin(),
                                 plan.create_guard().protected_paths().end());
  options.mounts = policy::GuardMountsOf(plan);
  options.free_dirs = policy::FreeCreateDirs(options.mounts);
  options.on_call = [metrics = config_.metrics](CallOutcome outcome, absl::Duration held) {
    metrics.CreateGuardCall(outcome, held);
  };
  const std::set<std::string> patterns(options.deny_patterns.begin(), options.deny_patterns.end());
  return CreateSupervisor::Start(
      std::move(options), std::move(channel),
      [&sink, patterns](const CreateViolation& violation) {
        v1::SandboxEvent event;
        v1::SandboxViolation* v = event.mutable_violation();
        v->set_action(violation.action);
        v->set_target(policy::SanitizeUtf8(violation.target));  // host names need not be UTF-8
        if (violation.action == kActionFileWriteSetId) {
          v->set_raw(absl::StrCat(violation.syscall,
                                  ": a set-uid or set-gid mode may not be set (no set-id files)"));
        } else if (patterns.count(violation.pattern) > 0) {
          v->set_raw(absl::StrCat(violation.syscall, ": a new name matching '", violation.pattern,
                                  "' may not be created (writeDenyPatterns)"));
        } else {
          v->set_raw(absl::StrCat(violation.syscall, ": '", violation.pattern,
                                  "' is something the host runs or trusts (denyWriteNames)"));
        }
        // Waits while the broker is behind: the trapped call (and so the command) waits too.
        sink.EmitWhenReady(event);
      },
      [&sink, run_id](const absl::Status& failure) {
        spdlog::error("run {}: create guard supervisor died: {}", run_id,
                      std::string(failure.message()));
        v1::SandboxEvent event;
        event.mutable_error()->set_message(
            absl::StrCat("create guard supervisor died (", failure.message(),
                         "): every further creation in writable mounts fails (ENOSYS)"));
        sink.Emit(event);
      });
}

grpc::Status LauncherService::Signal(grpc::ServerContext*, const v1::SignalRequest* request,
                                     v1::SignalResponse* response) {
  if (request->signal() <= 0 || request->signal() >= 65) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "signal: out of range");
  }
  absl::Status status = registry_.Signal(
      request->run_id(), peer_uid_, request->signal(),
      KillCauseFrom(request->reason().empty() ? "signalled by the broker" : request->reason(),
                    request->detail()));
  response->set_delivered(status.ok());
  return ToGrpc(status);
}

}  // namespace ccsandbox::launcher
