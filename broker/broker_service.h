// The public SandboxBroker service: sessions over the launcher. Launch resolves the
// backend and validates the spec; Exec turns spec + request into a LaunchPlan, runs it on
// the launcher and relays its events, labelled with the session's actual backend.
// RenderPlan shows what Launch would decide, starting nothing (broker_service_plan.cc); both
// take their checks from broker_service_checks.cc.
#ifndef CCSANDBOX_BROKER_BROKER_SERVICE_H_
#define CCSANDBOX_BROKER_BROKER_SERVICE_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "broker/broker_metrics.h"
#include "broker/exec_relay.h"
#include "broker/launcher_link.h"
#include "broker/launcher_probe.h"
#include "broker/microvm/runtime.h"
#include "broker/runtime_dir.h"
#include "broker/sandbox_watch.h"
#include "broker/session_egress.h"
#include "broker/session_events.h"
#include "broker/session_guests.h"
#include "broker/session_table.h"
#include "broker/terminal_table.h"
#include "gateway/credentials.h"
#include "grpcpp/grpcpp.h"
#include "policy/plan/backend.h"
#include "policy/plan/bind_checks.h"
#include "policy/plan/deny_sets.h"
#include "policy/plan/filename_policy.h"
#include "proto/launcher.grpc.pb.h"
#include "proto/sandbox.grpc.pb.h"
#include "workspace/workspaces.h"

namespace ccsandbox::broker {

struct BrokerConfig {
  policy::HostSandbox host;      // the boot probe and --sandbox
  std::string status_line;       // the boot line
  std::string launcher_address;  // e.g. unix:/run/ccsandbox/launcher.sock, for messages
  std::map<std::string, std::string> host_env;  // the broker's own environment
  // Egress for sandboxed sessions; all three outlive the service.
  proxy::EventLoop* proxy_loop = nullptr;
  std::shared_ptr<proxy::Resolver> resolver;
  RuntimeDir* runtime_dir = nullptr;
  // What the launcher said at boot about create-time filename enforcement; asked again at
  // Launch while unknown.
  CreateGuardState create_guard;
  // Resolved directories no bind may be, contain or lie inside: /, /proc, /dev, /sys, the
  // launcher's socket dir, the broker's listen dir and runtime dir. The broker's own are
  // also sent in every plan (LaunchPlan.forbidden_dirs) for the launcher to check again.
  policy::ForbiddenDirs forbidden_dirs;
  // An Exec client that takes no event for this long while events wait is dropped.
  absl::Duration exec_stall_limit = absl::Seconds(60);
  // Egress connection caps.
  EgressLimits egress_limits;
  // Where the session's proxies listen: the host's (EgressListenersFor), set with the probe.
  EgressListeners egress_listeners = EgressListeners::kUnixSockets;
  // Mints the push gateway's credentials (--push-credentials); null: spec.push is refused.
  std::shared_ptr<gateway::CredentialBroker> push_credentials;
  // Where the push gateway's upstreams resolve when the egress answers from a hosts file ("":
  // not listed); unset: DNS.
  std::function<std::string(const std::string&)> upstream_address;
  // The workspaces under --data-dir (outlives the service); null: a Launch with a dispatch is
  // FAILED_PRECONDITION and no registered checkout is known.
  workspace::Workspaces* workspaces = nullptr;
  // Counted when --metrics-listen asks; off (counting nothing) by default.
  BrokerMetrics metrics;
  // A terminal's backend when its client names none (--terminal-default-backend): "" = none,
  // the spec's default (the host shell).
  std::string terminal_default_backend;
  // Open terminals at most (--max-terminals).
  uint32_t max_terminals = 64;
  // The --listen address when it is not a Unix socket (--allow-tcp-listen): a native terminal
  // shares the host's network, which reaches that unauthenticated listener.
  std::string tcp_listener;
  // The microVM runtime (null: a microvm Launch is refused with the probe's note) and where its
  // guests' files go: one directory per session, bound into that session's sandbox only. Both
  // outlive the service.
  microvm::Runtime* microvm_runtime = nullptr;
  RuntimeDir* microvm_state = nullptr;
};

// The backend of a session's sandbox on the host: a microVM's hypervisor runs inside a native
// sandbox with the session's binds, deny sets, egress and limits.
inline v1::SandboxBackend HostBackend(v1::SandboxBackend actual) {
  return actual == v1::SANDBOX_BACKEND_MICROVM ? v1::SANDBOX_BACKEND_NATIVE : actual;
}

class BrokerService final : public v1::SandboxBroker::Service {
 public:
  // Every run, Signal and create-guard probe goes through `launcher`.
  BrokerService(BrokerConfig config, LauncherLink launcher);

  grpc::Status Probe(grpc::ServerContext*, const v1::ProbeRequest*,
                     v1::ProbeResponse* response) override;
  grpc::Status Launch(grpc::ServerContext*, const v1::LaunchRequest* request,
                      v1::SandboxHandle* handle) override;
  grpc::Status Exec(grpc::ServerContext* context, const v1::ExecRequest* request,
                    grpc::ServerWriter<v1::SandboxEvent>* writer) override;
  grpc::Status Kill(grpc::ServerContext*, const v1::KillRequest* request,
                    v1::KillResponse* response) override;
  grpc::Status Destroy(grpc::ServerContext*, const v1::SessionRequest* request,
                       v1::SandboxHandle* handle) override;
  grpc::Status GetSession(grpc::ServerContext*, const v1::SessionRequest* request,
                          v1::SandboxHandle* handle) override;
  grpc::Status ListSessions(grpc::ServerContext*, const v1::ListSessionsRequest*,
                            v1::ListSessionsResponse* response) override;
  grpc::Status Suspend(grpc::ServerContext*, const v1::SessionRequest* request,
                       v1::SandboxHandle* handle) override;
  grpc::Status Resume(grpc::ServerContext*, const v1::SessionRequest* request,
                      v1::SandboxHandle* handle) override;
  // Launch's decisions for the request, started nowhere (broker_service_plan.cc).
  grpc::Status RenderPlan(grpc::ServerContext*, const v1::RenderPlanRequest* request,
                          v1::RenderPlanResponse* response) override;
  // A hosted terminal (broker_service_terminal.cc).
  grpc::Status Terminal(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::TerminalOutput, v1::TerminalInput>* stream) override;

  // Destroys every session before the broker stops: their runs end with a `killed` event
  // (reason stopped, detail `why`) on their Exec streams instead of a bare UNAVAILABLE.
  void DestroyAllSessions(const std::string& why);

  // The channel every launcher call goes over (the health watch asks it too).
  std::shared_ptr<grpc::ChannelInterface> launcher_channel() const { return launcher_.channel; }

  // Every session now (what ListSessions answers, less the open terminals).
  std::vector<v1::SandboxHandle> Sessions() const { return sessions_.List(); }

  // The live sessions binding anything at, below or holding `dir` (a resolved path).
  std::vector<std::string> SessionsBinding(const std::string& dir) const {
    return sessions_.SessionsBinding(dir);
  }

 private:
  // What Launch checks before anything else: the backend it runs on and the spec it runs.
  struct CheckedLaunch {
    policy::BackendChoice choice;
    v1::SandboxSpec spec;
  };
  // What Launch fixes for every run of the session, decided on the host before anything starts.
  struct SessionPolicy {
    policy::FilenamePolicyDecision filenames;
    policy::DenyPaths deny;
    std::optional<v1::CreateGuardPlan> guard_plan;  // unset: no create guard
  };
  // Launch and RenderPlan share these, so a plan shows exactly what a Launch would decide.
  // The backend (SelectBackend), the workspace's spec (WorkspaceSpec), checked (CheckLaunchSpec).
  absl::StatusOr<CheckedLaunch> CheckLaunch(const v1::LaunchRequest& request);
  // The filename policy, the deny scan over the host and the create guard's plan; a native
  // session's binds below the data directory confirmed pinned.
  absl::StatusOr<SessionPolicy> DecideSessionPolicy(const v1::SandboxSpec& spec,
                                                    v1::SandboxBackend backend);
  // The spec a Launch runs: the request's, with a dispatch's binds and working directory, and
  // the workspace's registered checkouts among its protected paths.
  absl::StatusOr<v1::SandboxSpec> WorkspaceSpec(const v1::LaunchRequest& request);
  // Binds below the data directory (a dispatch's, a spec's own into a clone, a runner state
  // directory) are the objects
  // pinned in `deny` (what the launcher will bind), reached from the data directory without a
  // symlink: a workdir inside repos/ is an agent's to swap between the checks and the pin.
  absl::Status ConfirmDataDirBinds(const v1::SandboxSpec& spec,
                                   const policy::DenyPaths& deny) const;
  // The session's filename-pattern policy, given what the launcher's create guard can do
  // (asked only when it matters); a refusal is logged.
  absl::StatusOr<policy::FilenamePolicyDecision> DecideFilenames(const v1::SandboxSpec& spec,
                                                                 v1::SandboxBackend backend);
  // A native session's deny sets, resolved on the host and checked to travel in a plan; none
  // for the none backend.
  absl::StatusOr<policy::DenyPaths> SessionDenyPaths(const v1::SandboxSpec& spec,
                                                     v1::SandboxBackend backend);
  // A sandboxed session reaches the network only through its own proxies: started here for a
  // native session. Returns the handle's egress note.
  absl::StatusOr<std::string> StartEgress(const v1::SandboxSpec& spec, v1::SandboxBackend backend);

  // `ended` becomes kExit or kKilled once the run's last event is queued for the client.
  grpc::Status RunExec(grpc::ServerContext* context, const v1::ExecRequest* request,
                       grpc::ServerWriter<v1::SandboxEvent>* writer,
                       std::atomic<BrokerMetrics::ExecOutcome>& ended);
  // The run's LaunchPlan: the session's spec, deny sets, create guard and egress, checked
  // against what the launcher accepts. Takes the deny sets out of `start`.
  absl::StatusOr<v1::LaunchPlan> PlanRun(const v1::ExecRequest& request, const std::string& run_id,
                                         SessionTable::RunStart& start);
  // PlanRun given the session's egress plan (unset: none, the none backend).
  absl::StatusOr<v1::LaunchPlan> ComposeRunPlan(const v1::ExecRequest& request,
                                                const std::string& run_id,
                                                SessionTable::RunStart& start,
                                                std::optional<v1::EgressPlan> egress);
  // Suspend / Resume: freezes or thaws the session's sandbox through the launcher.
  grpc::Status FreezeSession(const std::string& session_id, bool frozen, v1::SandboxHandle* handle);
  // Starts the native session's one sandbox and waits until it is warm; its later end by itself
  // puts the session in error. A microvm session's sandbox also gets its guest's directory and
  // the hypervisor's files, and is warm once its guest is (StartSessionGuest).
  absl::Status StartSessionSandbox(const std::string& session_id);
  // Boots the microvm session's guest: its hypervisor as a run of the session's warm sandbox
  // `sandbox_id` (broker_service_microvm.cc).
  absl::Status StartSessionGuest(const std::string& session_id, const SessionTable::RunStart& start,
                                 const std::string& sandbox_id, const std::string& state_dir,
                                 microvm::GuestLayout layout);
  // Powers the session's guest off; returns its directory, for the caller to remove once the
  // session's sandbox (which can write there) has ended; "" when it has none.
  std::string StopSessionGuest(const std::string& session_id);
  // A terminal on the microvm backend: its own guest, booted in a native sandbox with the
  // terminal profile's plan, the shell on a PTY in the guest (broker_service_microvm.cc).
  grpc::Status MicrovmTerminal(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::TerminalOutput, v1::TerminalInput>* stream,
      const v1::TerminalOpen& open, const policy::BackendChoice& choice, const std::string& id);
  // Exec in a microvm session: `plan`'s command, environment and limits run in its guest.
  grpc::Status RunGuestExec(grpc::ServerContext* context, const v1::ExecRequest& request,
                            grpc::ServerWriter<v1::SandboxEvent>* writer, const std::string& run_id,
                            const v1::LaunchPlan& plan,
                            std::atomic<BrokerMetrics::ExecOutcome>& ended);
  // UNAVAILABLE, saying where, when the launcher cannot be reached within a few seconds.
  grpc::Status AwaitLauncher();
  // What the Exec call returns once the launcher call has ended; a run the launcher lost
  // mid-way gets its killed event here. Waits for the client to take every event.
  grpc::Status ExecOutcome(grpc::ServerContext* context, const std::string& run_id,
                           const ExecRelay::Result& result,
                           const std::function<void()>& before_last, ExecRelay& relay);
  // Removes the session, kills its runs, stops its proxies.
  absl::StatusOr<v1::SandboxHandle> DestroySession(const std::string& session_id,
                                                   const std::string& why,
                                                   const std::string& kill_detail =
                                                       "session "
                                                       "destroyed");
  // Asks the launcher to signal each run; returns how many it reached.
  int SignalRuns(const std::vector<std::string>& run_ids, int signal, const std::string& reason);
  std::string NextRunId(const std::string& session_id);
  // Kills open terminal `id` (its shell and session) through the launcher, or hangs its call
  // up when the launcher does not answer; false when no such terminal is open.
  bool EndTerminal(const std::string& id, const std::string& why);
  // A terminal's launch plan from its open request (backend chosen), or why not.
  absl::StatusOr<v1::LaunchPlan> PlanTerminal(const v1::TerminalOpen& open,
                                              const policy::BackendChoice& choice,
                                              const std::string& id);
  // The launcher's create guard, probing it again (briefly) while it has not answered.
  CreateGuardState CurrentCreateGuard();
  // Asks the launcher now (Probe is answered with the present, not the boot-time state).
  CreateGuardState AskLauncherNow();
  // Scans the spec's mounts on the host: both deny sets, in both spellings.
  absl::StatusOr<policy::DenyPaths> ResolveDenyPaths(const v1::SandboxSpec& spec);

  const BrokerConfig config_;
  const LauncherLink launcher_;
  SessionTable sessions_;
  TerminalTable terminals_;  // open terminals: listed, killed and destroyed like sessions
  SandboxWatch sandboxes_;   // after sessions_ and launcher_: its threads use both until joined
  SessionEvents events_;
  SessionEgress egress_;  // after events_: its relay publishes there until it stops
  SessionGuests guests_;  // the microvm sessions' guests
  absl::Mutex create_guard_mu_;
  CreateGuardState create_guard_ ABSL_GUARDED_BY(create_guard_mu_);
  const ExecRelay::Options relay_options_;
  // The Exec streams in flight by run id, so Kill and Destroy can end a run the launcher's
  // Signal missed (not started there yet). `cancel` holds such a request made before the
  // relay existed.
  struct RelayEntry {
    ExecRelay* relay = nullptr;
    std::string cancel;
  };
  absl::Mutex relays_mu_;
  std::map<std::string, RelayEntry> relays_ ABSL_GUARDED_BY(relays_mu_);
  std::atomic<uint64_t> run_counter_{0};
  const uint64_t run_salt_;
  const std::vector<std::string> home_dirs_;
  const std::map<std::string, std::string> native_env_;  // base environments, fixed at boot
  const std::map<std::string, std::string> none_env_;
};

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_BROKER_SERVICE_H_
