// sandbox_launcherd: the small privileged helper. Listens on a Unix socket, serves only the
// configured peer uids (SO_PEERCRED), validates each LaunchPlan and runs it under bwrap (or
// unwrapped with a scrubbed environment for the none backend), streaming its events.
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/daemon_logging.h"
#include "base/dashed_flags.h"
#include "base/deny_all_service.h"
#include "base/kill_cause.h"
#include "base/metrics.h"
#include "base/metrics_flags.h"
#include "base/paths.h"
#include "base/peer_check.h"
#include "base/peer_listener.h"
#include "base/standard_services.h"
#include "base/stop_signals.h"
#include "base/version.h"
#include "grpc/grpc.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/server_posix.h"
#include "launcher/cgroups/launcher_cgroups.h"
#include "launcher/create_guard/probe.h"
#include "launcher/idmap_userns.h"
#include "launcher/launcher_service.h"
#include "launcher/seccomp_baseline.h"
#include "policy/plan/bwrap_argv.h"
#include "proto/grpc_limits.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, socket, "", "Unix socket path to listen on (created mode 0660)");
ABSL_FLAG(std::string, socket_group, "",
          "group (name or gid) that owns the socket, so a non-root broker in it can connect; "
          "the peer uid is still checked against --allowed-uids");
ABSL_FLAG(std::string, socket_mode, "0660",
          "the socket's permission bits, octal: 0600 (owner only) or 0660 (and --socket-group); "
          "never any bit for others");
ABSL_FLAG(std::string, allowed_uids, "",
          "comma-separated peer uids or user names allowed to call (e.g. the broker's user)");
ABSL_FLAG(std::string, system_ro_dirs, "",
          "comma-separated read-only system base for native sandboxes "
          "(default /usr,/bin,/sbin,/lib,/lib32,/lib64,/libx32,/etc)");
ABSL_FLAG(std::string, bwrap, "", "bwrap binary (default: searched on PATH)");
ABSL_FLAG(std::string, create_guard, "on",
          "on: enforce filename-pattern denies at creation time where the kernel allows it; "
          "off: never (plans that need it are then refused, never run weaker)");
ABSL_FLAG(std::string, cgroups, "auto",
          "auto: limit every session's sandbox and run with cgroups (v2, or the v1 controllers) "
          "where the host has them; off: never (a Launch asking for limits is then refused)");
ABSL_FLAG(std::string, cgroup_fs, "",
          "use only the cgroup file systems mounted at or below this directory (default: "
          "wherever /proc/self/mountinfo has them); one without the memory and pids "
          "controllers means resource limits are not enforced");
ABSL_FLAG(uint64_t, max_pids, 0,
          "ceiling of a session's resources.pidsMax (0: 32768); the default is 4096");
ABSL_FLAG(uint64_t, max_memory_bytes, 0,
          "ceiling of a session's resources.memoryMaxBytes (0: the host's RAM); the default is "
          "min(4 GiB, the ceiling)");
ABSL_FLAG(uint32_t, max_cpu_millicores, 0,
          "ceiling of a session's resources.cpuMillicores (0: every CPU of the host)");
ABSL_FLAG(uint32_t, root_sandbox_uid, 65530,
          "unprivileged host uid that a root caller's sandboxed commands run as (uid 0 inside "
          "their user namespace; their binds are idmapped so files keep host root ownership)");
ABSL_FLAG(uint32_t, root_sandbox_gid, 65530, "host gid for a root caller's sandboxed commands");
ABSL_FLAG(absl::Duration, stream_stall_timeout, absl::Seconds(120),
          "a broker that takes none of a run's events for this long while they wait, once the "
          "command has ended (or while its last output drains), loses the run's stream");
ABSL_FLAG(std::string, shim, "",
          "sandbox_shim binary bound into sandboxes with egress (default: beside this binary)");

namespace ccsandbox::launcher {
namespace {

// The command line, checked: who may call and where, and the LauncherConfig that the
// start-up probes complete.
struct LauncherSetup {
  std::string socket_path;
  std::string socket_group;  // empty: the socket keeps the launcher's group
  std::vector<uid_t> allowed;
  std::string create_guard;  // --create-guard, checked by DecideCreateGuard
  LauncherConfig config;
};

// Logs why the launcher cannot start and returns its exit code (2: a bad flag, 1: the host
// refused).
int CannotStart(const absl::Status& why, int exit_code) {
  spdlog::critical("{}", std::string(why.message()));
  return exit_code;
}

absl::StatusOr<std::vector<uid_t>> ParseAllowedUids() {
  std::vector<uid_t> allowed;
  for (absl::string_view part :
       absl::StrSplit(absl::GetFlag(FLAGS_allowed_uids), ',', absl::SkipWhitespace())) {
    uint32_t uid;
    if (!absl::SimpleAtoi(part, &uid)) {
      const std::string name(part);
      const struct passwd* user = getpwnam(name.c_str());
      if (user == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("--allowed-uids: '", part, "' is neither a uid nor a user name"));
      }
      uid = user->pw_uid;
    }
    allowed.push_back(uid);
  }
  return allowed;
}

// Every allowed uid must be one this launcher can run commands as.
absl::Status CheckServable(const std::vector<uid_t>& allowed) {
  for (uid_t uid : allowed) {
    if (absl::StatusOr<std::optional<Identity>> id = IdentityFor(uid); !id.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--allowed-uids: ", id.status().message()));
    }
  }
  return absl::OkStatus();
}

// The socket's directory, resolved when it exists.
std::string SocketDir(const std::string& socket_path) {
  std::string dir = socket_path.substr(0, socket_path.rfind('/'));
  if (dir.empty()) dir = "/";
  if (char resolved[PATH_MAX]; realpath(dir.c_str(), resolved) != nullptr) dir = resolved;
  return dir;
}

// bwrap from --bwrap or PATH; empty (native plans are then refused) when it is not there.
std::string FindBwrap() {
  const std::string bwrap = absl::GetFlag(FLAGS_bwrap);
  const char* path_env = getenv("PATH");
  std::string found =
      FindExecutable(bwrap.empty() ? "bwrap" : bwrap, path_env ? path_env : "/usr/bin:/bin")
          .value_or("");
  if (found.empty()) {
    spdlog::warn(
        "bwrap not found on PATH: native plans will be refused "
        "(install: apt-get install bubblewrap socat)");
  }
  return found;
}

// sandbox_shim from --shim or beside this binary; empty (plans with egress are then refused)
// when it is not executable.
std::string FindShim() {
  std::string shim = absl::GetFlag(FLAGS_shim);
  if (shim.empty()) {
    if (char self[PATH_MAX]; realpath("/proc/self/exe", self) != nullptr) {
      const std::string dir = std::string(self).substr(0, std::string(self).rfind('/'));
      shim = dir + "/sandbox_shim";
    }
  }
  if (access(shim.c_str(), X_OK) != 0) {
    spdlog::warn("sandbox_shim not found at '{}': plans with egress will be refused", shim);
    return "";
  }
  return shim;
}

// The resolved directories of the launcher's own programs: itself, the shim and bwrap.
std::vector<std::string> OwnDirs(const LauncherConfig& config) {
  std::vector<std::string> dirs;
  for (const std::string& program :
       {std::string("/proc/self/exe"), config.shim_path, config.bwrap_path}) {
    if (char resolved[PATH_MAX]; !program.empty() && realpath(program.c_str(), resolved)) {
      const std::string path(resolved);
      dirs.push_back(path.substr(0, std::max<size_t>(path.rfind('/'), 1)));
    }
  }
  return dirs;
}

// Each run covers the socket directory with its staging tmpfs (in its own mount namespace):
// it must hold nothing a sandbox is built from.
absl::Status CheckSocketDirApart(const LauncherConfig& config) {
  std::vector<std::string> built_from = config.own_dirs;
  built_from.insert(built_from.end(), config.system_ro_dirs.begin(), config.system_ro_dirs.end());
  for (const std::string& dir : built_from) {
    if (config.socket_dir == "/" || IsUnderOrEqual(dir, config.socket_dir) ||
        IsUnderOrEqual(config.socket_dir, dir)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--socket: its directory '", config.socket_dir, "' overlaps '", dir,
                       "', which sandboxes are built from; put the socket in a directory of its "
                       "own (e.g. /run/ccsandbox)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<LauncherSetup> SetupFromFlags() {
  LauncherSetup setup;
  setup.socket_path = absl::GetFlag(FLAGS_socket);
  setup.socket_group = absl::GetFlag(FLAGS_socket_group);
  setup.create_guard = absl::GetFlag(FLAGS_create_guard);
  absl::StatusOr<std::vector<uid_t>> allowed = ParseAllowedUids();
  if (!allowed.ok()) return allowed.status();
  setup.allowed = *std::move(allowed);
  if (setup.socket_path.empty() || setup.allowed.empty()) {
    return absl::InvalidArgumentError("--socket and --allowed-uids are required");
  }
  if (absl::Status servable = CheckServable(setup.allowed); !servable.ok()) return servable;

  LauncherConfig& config = setup.config;
  config.socket_dir = SocketDir(setup.socket_path);
  const std::string ro = absl::GetFlag(FLAGS_system_ro_dirs);
  config.system_ro_dirs =
      ro.empty() ? policy::DefaultSystemRoDirs()
                 : std::vector<std::string>(absl::StrSplit(ro, ',', absl::SkipWhitespace()));
  config.bwrap_path = FindBwrap();
  config.shim_path = FindShim();
  config.stream_stall_limit = absl::GetFlag(FLAGS_stream_stall_timeout);
  if (config.stream_stall_limit <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--stream-stall-timeout: must be positive");
  }
  config.own_dirs = OwnDirs(config);
  if (absl::Status apart = CheckSocketDirApart(config); !apart.ok()) return apart;
  config.root_sandbox_uid = absl::GetFlag(FLAGS_root_sandbox_uid);
  config.root_sandbox_gid = absl::GetFlag(FLAGS_root_sandbox_gid);
  return setup;
}

// A root launcher that serves uid 0 makes the user namespace its root callers' binds are
// idmapped through; a failure is a bad --root-sandbox-uid/--root-sandbox-gid.
absl::Status ProbeIdmapUserns(const std::vector<uid_t>& allowed, LauncherConfig& config) {
  if (geteuid() != 0 || std::find(allowed.begin(), allowed.end(), 0) == allowed.end()) {
    return absl::OkStatus();
  }
  absl::StatusOr<UniqueFd> userns =
      MakeIdmapUserns(config.root_sandbox_uid, config.root_sandbox_gid);
  if (!userns.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--root-sandbox-uid/--root-sandbox-gid: ", userns.status().message()));
  }
  config.idmap_userns = std::move(*userns);
  spdlog::info("root callers' sandboxes run as host uid {} gid {} (uid 0 inside), binds idmapped",
               config.root_sandbox_uid, config.root_sandbox_gid);
  return absl::OkStatus();
}

// Whether filename-pattern denies can be enforced at creation time: probed unless
// --create-guard=off, and logged either way.
absl::Status DecideCreateGuard(const std::string& mode, LauncherConfig& config) {
  if (mode == "on") {
    CreateGuardSupport support = ProbeCreateGuard();
    config.create_guard_available = support.available && !config.shim_path.empty();
    config.create_guard_reason =
        config.shim_path.empty() ? "sandbox_shim not found" : support.reason;
  } else if (mode == "off") {
    config.create_guard_reason = "turned off by --create-guard=off";
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--create-guard: '", mode, "' is neither on nor off"));
  }
  spdlog::info("filename-pattern denies at creation time: {}{}",
               config.create_guard_available ? "" : "UNAVAILABLE: ", config.create_guard_reason);
  return absl::OkStatus();
}

// --socket-mode and --socket-group: the socket's bits and group, so a non-root broker in the
// group can connect. A bad mode or an unknown group is a bad flag (InvalidArgument).
absl::Status SetSocketAccess(const std::string& socket_path, const std::string& group) {
  const std::string mode_flag = absl::GetFlag(FLAGS_socket_mode);
  char* end = nullptr;
  const unsigned long mode = strtoul(mode_flag.c_str(), &end, 8);
  // Others never get a bit: the peer check would still refuse them, but the socket says so too.
  if (mode_flag.empty() || *end != '\0' || mode > 0777 || (mode & 0007) != 0 ||
      (mode & 0600) != 0600) {
    return absl::InvalidArgumentError(
        absl::StrCat("--socket-mode: '", mode_flag,
                     "' must be octal with rw for the owner and nothing for "
                     "others (0600, 0660)"));
  }
  if (chmod(socket_path.c_str(), static_cast<mode_t>(mode)) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--socket-mode: cannot chmod '", socket_path, "'"));
  }
  if (group.empty()) return absl::OkStatus();
  gid_t gid = 0;
  if (!absl::SimpleAtoi(group, &gid)) {
    const struct group* g = getgrnam(group.c_str());
    if (g == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--socket-group: no group '", group, "'"));
    }
    gid = g->gr_gid;
  }
  if (chown(socket_path.c_str(), static_cast<uid_t>(-1), gid) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--socket-group: cannot give '", socket_path, "' to gid ", gid));
  }
  return absl::OkStatus();
}

// The gRPC servers accepted connections are handed to: one per allowed uid, each with its
// own LauncherService, health and reflection, and two that refuse every call and say why.
class LauncherServers {
 public:
  LauncherServers(const LauncherConfig& config, RunRegistry& registry,
                  const std::vector<uid_t>& allowed) {
    for (uid_t uid : allowed) {
      services_[uid] = std::make_unique<LauncherService>(config, registry, uid);
      grpc::ServerBuilder builder;
      ApplyServerLimits(builder);
      // Behind the peer check like the launcher's own service: only allowed uids reach them.
      ServeStandardServices(builder);
      builder.RegisterService(services_[uid].get());
      servers_[uid] = builder.BuildAndStart();
      if (servers_[uid] != nullptr) {
        servers_[uid]->GetHealthCheckService()->SetServingStatus(
            v1::SandboxLauncher::service_full_name(), true);
      }
    }
    deny_server_ = StartDenyAllServer(deny_service_);
    sandboxed_server_ = StartDenyAllServer(sandboxed_service_);
  }

  // Hands `conn` to the server of its peer's uid, or to one that refuses it.
  void Accept(UniqueFd conn, const ucred& peer) {
    if (absl::Status outside = CheckPeerOutsideSandboxes(peer); !outside.ok()) {
      spdlog::warn("refused connection from uid {} pid {}: {}", peer.uid, peer.pid,
                   std::string(outside.message()));
      grpc::AddInsecureChannelFromFd(sandboxed_server_.get(), conn.Release());
      return;
    }
    auto it = servers_.find(peer.uid);
    if (it == servers_.end()) {
      spdlog::warn("refused connection from uid {} pid {}: not in --allowed-uids", peer.uid,
                   peer.pid);
      grpc::AddInsecureChannelFromFd(deny_server_.get(), conn.Release());
      return;
    }
    grpc::AddInsecureChannelFromFd(it->second.get(), conn.Release());
  }

  // Calls in flight get two seconds to end (their sandboxes are killed by then); the
  // refusing servers none.
  void Shutdown() {
    for (auto& [uid, server] : servers_) {
      server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    }
    deny_server_->Shutdown(std::chrono::system_clock::now());
    sandboxed_server_->Shutdown(std::chrono::system_clock::now());
  }

 private:
  std::map<uid_t, std::unique_ptr<LauncherService>> services_;
  std::map<uid_t, std::unique_ptr<grpc::Server>> servers_;
  DenyAllService deny_service_{"this uid is not allowed to use the sandbox launcher"};
  std::unique_ptr<grpc::Server> deny_server_;
  DenyAllService sandboxed_service_{
      "callers inside a sandbox may not use the sandbox launcher (nested pid namespace)"};
  std::unique_ptr<grpc::Server> sandboxed_server_;
};

// Serves until SIGINT or SIGTERM, then stops in order: the listener, the running sandboxes
// (killed, so every Run returns), the servers, and last the socket file.
void ServeUntilStopped(std::unique_ptr<PeerListener> listener, LauncherServers& servers,
                       RunRegistry& registry, const LauncherSetup& setup) {
  std::thread stopper([&] {
    const int sig = WaitForStopSignal();
    spdlog::info("signal {}: stopping; running sandboxes are killed", sig);
    listener->Stop();
  });

  spdlog::info("listening on {} for uid(s) {}; bwrap {}", setup.socket_path,
               absl::StrJoin(setup.allowed, ","),
               setup.config.bwrap_path.empty() ? "missing" : setup.config.bwrap_path);
  listener->Serve(
      [&servers](UniqueFd conn, const ucred& peer) { servers.Accept(std::move(conn), peer); });

  registry.KillAll({std::string(kKilledLauncherRestart), "the launcher is shutting down"});
  servers.Shutdown();
  spdlog::info("stopping: every call has ended");
  stopper.join();
  listener.reset();
}

// The pool's cgroups (made ahead, or retired and not yet removed), then this launcher's own
// directory in each hierarchy: an orderly stop leaves no cgroup behind.
void RemoveOwnCgroups(ResourceLimitsConfig& resources) {
  resources.pool.reset();  // the last holder: removes what it held, joins its worker
  if (!resources.cgroups.has_value()) return;
  if (absl::Status removed = resources.cgroups->RemoveAll(); !removed.ok()) {
    spdlog::warn("{}", std::string(removed.message()));
  }
}

int Main(int argc, char** argv) {
  SetVersionFlag("sandbox_launcherd");
  absl::SetProgramUsageMessage(
      "sandbox_launcherd --socket=PATH --allowed-uids=UID[,UID...] [--system-ro-dirs=...]");
  ParseDashedCommandLine(argc, argv);
  CaptureProtobufParseErrors();  // before any thread starts
  if (absl::Status logging = SetUpDaemonLogging("launcher"); !logging.ok()) {
    return CannotStart(logging, 2);
  }

  // Outlives everything that counts in its registry.
  std::unique_ptr<MetricsEndpoint> metrics;
  absl::StatusOr<LauncherSetup> setup = SetupFromFlags();
  if (!setup.ok()) return CannotStart(setup.status(), 2);
  LauncherConfig& config = setup->config;
  if (absl::Status idmap = ProbeIdmapUserns(setup->allowed, config); !idmap.ok()) {
    return CannotStart(idmap, 2);
  }
  if (absl::Status guard = DecideCreateGuard(setup->create_guard, config); !guard.ok()) {
    return CannotStart(guard, 2);
  }
  // SIGPIPE from a closed stdin pipe must not kill the launcher; SIGINT/SIGTERM are taken
  // by a dedicated thread for an orderly shutdown. Before any thread starts (the cgroup pool's
  // would otherwise take a SIGTERM and die of it).
  BlockStopSignals();
  // After the signal mask: the endpoint's threads must not take a SIGTERM.
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint = StartMetricsFromFlags("launcher");
  if (!endpoint.ok()) {
    return CannotStart(endpoint.status(), absl::IsInvalidArgument(endpoint.status()) ? 2 : 1);
  }
  metrics = *std::move(endpoint);
  config.metrics = LauncherMetrics(metrics.get());
  // The socket first: its cgroup directory is named after it, and what is found there belongs
  // to a previous launcher only once no launcher listens on it (else its sandboxes are killed).
  absl::StatusOr<std::unique_ptr<PeerListener>> listener = PeerListener::Bind(setup->socket_path);
  if (!listener.ok()) return CannotStart(listener.status(), 1);
  if (absl::Status given = SetSocketAccess(setup->socket_path, setup->socket_group); !given.ok()) {
    return CannotStart(given, absl::IsInvalidArgument(given) ? 2 : 1);
  }
  absl::StatusOr<ResourceLimitsConfig> resources =
      SetUpResourceLimits({.mode = absl::GetFlag(FLAGS_cgroups),
                           .socket_path = setup->socket_path,
                           .fs_root = absl::GetFlag(FLAGS_cgroup_fs),
                           .max_pids = absl::GetFlag(FLAGS_max_pids),
                           .max_memory_bytes = absl::GetFlag(FLAGS_max_memory_bytes),
                           .max_cpu_millicores = absl::GetFlag(FLAGS_max_cpu_millicores)});
  if (!resources.ok()) return CannotStart(resources.status(), 2);
  config.resources = *std::move(resources);
  // Every native run gets the seccomp baseline: no filter, no launcher.
  absl::StatusOr<std::string> seccomp = SeccompBaselineProgram();
  if (!seccomp.ok()) {
    RemoveOwnCgroups(config.resources);
    return CannotStart(seccomp.status(), 1);
  }
  config.seccomp_program = std::move(*seccomp);
  if (config.create_guard_available) {
    absl::StatusOr<std::string> guarded = SeccompBaselineProgram(SetIdRule::kNotify);
    if (!guarded.ok()) {
      RemoveOwnCgroups(config.resources);
      return CannotStart(guarded.status(), 1);
    }
    config.guarded_seccomp_program = std::move(*guarded);
  }

  // Held for the process's life: otherwise the last server's destructor runs gRPC's library
  // shutdown, which joins its executor threads and can take seconds under load (measured > 5 s,
  // so a supervisor's SIGKILL ended the stop before the cgroups were removed). Exiting does not
  // need it.
  grpc_init();
  {
    RunRegistry registry;
    LauncherServers servers(config, registry, setup->allowed);
    ServeUntilStopped(*std::move(listener), servers, registry, *setup);
  }  // every service, sandbox and session cgroup is gone here
  spdlog::info("stopping: services released");
  RemoveOwnCgroups(config.resources);
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace ccsandbox::launcher

int main(int argc, char** argv) { return ccsandbox::launcher::Main(argc, argv); }
