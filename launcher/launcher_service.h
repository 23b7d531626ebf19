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
#include "launcher/create_guard/supervisor.h"
#include "launcher/run_registry.h"
#include "launcher/run_supervisor.h"
#include "launcher/sandbox_process.h"
#include "proto/launcher.grpc.pb.h"

namespace ccsandbox::launcher {

struct LauncherConfig {
  std::string socket_dir;  // never mountable into a sandbox
  std::string bwrap_path;  // empty when bwrap was not found
  std::vector<std::string> system_ro_dirs;
  std::string seccomp_program;  // compiled once at start-up (SeccompBaselineProgram)
  std::string shim_path;        // sandbox_shim, bound into sandboxes that have egress
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

 private:
  // Descriptors a run's spawn needs, kept open until the process has started.
  struct SpawnFds {
    UniqueFd seccomp;                // the BPF program bwrap reads
    UniqueFd guard_shim;             // the shim's end of the create guard's notify channel
    UniqueFd guard_launcher;         // ours: handed to the CreateSupervisor
    std::optional<BindStage> stage;  // the checked, cloned bind sources
  };
  // Validates the plan and builds its process; a refusal is logged.
  absl::StatusOr<ProcessSpec> AdmitRun(const v1::LaunchPlan& plan, SpawnFds& fds) const;
  // The run's process: bwrap around the command (native), or the command itself (none).
  absl::StatusOr<ProcessSpec> BuildProcessSpec(const v1::LaunchPlan& plan, SpawnFds& fds) const;
  // Completes `spec` to run the command under bwrap: the seccomp baseline, the staged bind
  // sources, the create guard's channel when the plan needs the guard, and bwrap's argv.
  absl::Status WrapInBwrap(const v1::LaunchPlan& plan, const std::optional<Identity>& identity,
                           ProcessSpec& spec, SpawnFds& fds) const;
  // When the plan needs the create guard: its channel, the shim's end inherited by the run
  // and returned, ours kept in `fds`. nullopt when the plan needs no guard.
  absl::StatusOr<std::optional<int>> OpenCreateGuardChannel(const v1::LaunchPlan& plan,
                                                            ProcessSpec& spec, SpawnFds& fds) const;

  // Starts the run's CreateSupervisor on our end of the channel; its violations and its
  // failure go to `sink`.
  absl::StatusOr<std::unique_ptr<CreateSupervisor>> StartCreateGuard(const v1::LaunchPlan& plan,
                                                                     UniqueFd channel,
                                                                     EventSink& sink) const;

  const LauncherConfig& config_;
  RunRegistry& registry_;
  const uid_t peer_uid_;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_LAUNCHER_SERVICE_H_
