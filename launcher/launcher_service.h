// The SandboxLauncher gRPC service for ONE peer uid. The launcher builds one instance per
// allowed uid and hands each accepted connection to the instance of its SO_PEERCRED uid,
// so a handler never has to guess who is calling.
#ifndef CCSANDBOX_LAUNCHER_LAUNCHER_SERVICE_H_
#define CCSANDBOX_LAUNCHER_LAUNCHER_SERVICE_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "launcher/bind_stage.h"
#include "launcher/cgroups/launcher_cgroups.h"
#include "launcher/create_guard/supervisor.h"
#include "launcher/grpc_sink.h"
#include "launcher/launcher_metrics.h"
#include "launcher/run_registry.h"
#include "launcher/run_supervisor.h"
#include "launcher/sandbox_process.h"
#include "launcher/warm/warm_sandbox.h"
#include "proto/launcher.grpc.pb.h"

namespace ccsandbox::launcher {

struct LauncherConfig {
  std::string socket_dir;  // never mountable into a sandbox
  std::string bwrap_path;  // empty when bwrap was not found
  std::vector<std::string> system_ro_dirs;
  std::string seccomp_program;  // compiled once at start-up (SeccompBaselineProgram)
  // The same for runs with the create guard, whose supervisor answers set-id modes
  // (SetIdRule::kNotify); compiled when the guard is available.
  std::string guarded_seccomp_program;
  std::string shim_path;  // sandbox_shim, bound into sandboxes that have egress
  // Create-time enforcement of the filename-pattern denies (ProbeCreateGuard at start-up,
  // unless turned off): plans that need it are refused when it is unavailable.
  bool create_guard_available = false;
  std::string create_guard_reason;
  // A root caller's sandboxes run as this unprivileged host uid/gid (uid 0 inside their user
  // namespace), and see its binds through mounts idmapped by `idmap_userns` (0 <-> this uid).
  uid_t root_sandbox_uid = 0;
  gid_t root_sandbox_gid = 0;
  UniqueFd idmap_userns;
  // Resolved directories of the launcher's own programs (itself, the shim, bwrap): a writable
  // bind of them would let a sandbox replace what confines the next one.
  std::vector<std::string> own_dirs;
  // A broker that takes none of a run's events for this long, while they wait, loses the
  // stream (the call is cancelled): after the command ended, or while draining its output.
  absl::Duration stream_stall_limit = absl::Seconds(120);
  // Resource limits (cgroups): enforced when `resources.cgroups` is set.
  ResourceLimitsConfig resources;
  // Counted when --metrics-listen asks; off (counting nothing) by default.
  LauncherMetrics metrics;
};

// The identity commands of `peer_uid` run as, or an error when this launcher cannot
// switch to it (a non-root launcher serving another uid). nullopt: no switch (a non-root
// launcher serving its own uid, or a root caller's `none` run, which is unsandboxed by
// definition). Native runs of root callers use the launcher's root sandbox uid instead.
absl::StatusOr<std::optional<Identity>> IdentityFor(uid_t peer_uid);

class LauncherService final : public v1::SandboxLauncher::Service {
 public:
  LauncherService(const LauncherConfig& config, RunRegistry& registry, uid_t peer_uid);

  grpc::Status Probe(grpc::ServerContext* context, const v1::LauncherProbeRequest* request,
                     v1::LauncherProbeResponse* response) override;
  grpc::Status Run(grpc::ServerContext* context, const v1::LaunchPlan* plan,
                   grpc::ServerWriter<v1::SandboxEvent>* writer) override;
  grpc::Status Signal(grpc::ServerContext* context, const v1::SignalRequest* request,
                      v1::SignalResponse* response) override;
  grpc::Status StartSandbox(grpc::ServerContext* context, const v1::LaunchPlan* plan,
                            grpc::ServerWriter<v1::SandboxLifecycle>* writer) override;
  grpc::Status Freeze(grpc::ServerContext* context, const v1::FreezeRequest* request,
                      v1::FreezeResponse* response) override;
  grpc::Status Terminal(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::TerminalOutput, v1::LauncherTerminalInput>* stream) override;

 private:
  // Descriptors a run's spawn needs, kept open until the process has started.
  struct SpawnFds {
    UniqueFd seccomp;                // the BPF program bwrap reads
    UniqueFd guard_shim;             // the shim's end of the create guard's notify channel
    UniqueFd guard_launcher;         // ours: handed to the CreateSupervisor
    std::optional<BindStage> stage;  // the checked, cloned bind sources
    PooledCgroup cgroup;             // the session's (the run's, one-shot), when enforced
    std::string limits;              // how the run is limited, for the log and the handle
    UniqueFd init_shim;              // a warm sandbox's init's end of its channel
    UniqueFd init_launcher;          // ours: handed to the WarmSandbox
  };
  // Validates the plan and builds its process; a refusal is logged. `warm`: the plan starts a
  // warm sandbox (no command; the shim is its init).
  // `terminal`: the plan is a terminal's (the Terminal RPC), the only kind with open_network.
  absl::StatusOr<ProcessSpec> AdmitRun(const v1::LaunchPlan& plan, SpawnFds& fds, bool warm,
                                       bool terminal = false) const;
  // The run's process: bwrap around the command (native), or the command itself (none).
  absl::StatusOr<ProcessSpec> BuildProcessSpec(const v1::LaunchPlan& plan, SpawnFds& fds,
                                               bool warm) const;
  // Completes `spec` to run the command under bwrap: the seccomp baseline, the staged bind
  // sources, the create guard's channel when the plan needs the guard (or, warm, the init's
  // channel), and bwrap's argv.
  absl::Status WrapInBwrap(const v1::LaunchPlan& plan, const std::optional<Identity>& identity,
                           ProcessSpec& spec, SpawnFds& fds, bool warm) const;
  // The session's cgroup with its limits (nullptr where limits are not enforced and none were
  // asked for); its cgroup.procs files go into `spec` for bwrap to join.
  absl::Status JoinSessionCgroup(const v1::LaunchPlan& plan, ProcessSpec& spec,
                                 SpawnFds& fds) const;
  // The shim's end of the channel of a warm sandbox's init; ours kept in `fds`.
  absl::StatusOr<int> OpenInitChannel(const v1::LaunchPlan& plan, ProcessSpec& spec,
                                      SpawnFds& fds) const;
  // A Run whose plan names a warm sandbox: the command runs in it.
  grpc::Status RunInSandbox(grpc::ServerContext* context, const v1::LaunchPlan* plan,
                            grpc::ServerWriter<v1::SandboxEvent>* writer);
  // What every started run does next: its create guard (options from `sandbox`, the plan that
  // made its sandbox), ready, supervision to the end.
  grpc::Status SuperviseStarted(const v1::LaunchPlan& run, const v1::LaunchPlan& sandbox,
                                std::unique_ptr<SupervisedProcess> process, pid_t pid,
                                UniqueFd guard_channel, RunControl& control, GrpcSink& sink,
                                std::function<std::optional<CgroupUsage>()> usage);
  // When the plan needs the create guard: its channel, the shim's end inherited by the run
  // and returned, ours kept in `fds`. nullopt when the plan needs no guard.
  absl::StatusOr<std::optional<int>> OpenCreateGuardChannel(const v1::LaunchPlan& plan,
                                                            ProcessSpec& spec, SpawnFds& fds) const;

  // Starts the run's CreateSupervisor on our end of the channel; its violations and its
  // failure go to `sink`.
  absl::StatusOr<std::unique_ptr<CreateSupervisor>> StartCreateGuard(const v1::LaunchPlan& plan,
                                                                     const std::string& run_id,
                                                                     UniqueFd channel,
                                                                     EventSink& sink) const;

  const LauncherConfig& config_;
  RunRegistry& registry_;
  const uid_t peer_uid_;
  WarmSandboxes warm_;  // this caller's
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_LAUNCHER_SERVICE_H_
