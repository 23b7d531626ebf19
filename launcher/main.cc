// sandbox_launcherd: the small privileged helper. Listens on a Unix socket, serves only the
// configured peer uids (SO_PEERCRED), validates each LaunchPlan and runs it under bwrap (or
// unwrapped with a scrubbed environment for the none backend), streaming its events.
#include <grp.h>
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
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/server_posix.h"
#include "launcher/create_guard/probe.h"
#include "base/dashed_flags.h"
#include "base/deny_all_service.h"
#include "base/peer_check.h"
#include "launcher/idmap_userns.h"
#include "launcher/launcher_service.h"
#include "base/peer_listener.h"
#include "base/stop_signals.h"
#include "launcher/seccomp_baseline.h"
#include "policy/plan/bwrap_argv.h"
#include "base/paths.h"
#include "proto/grpc_limits.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, socket, "", "Unix socket path to listen on (created mode 0660)");
ABSL_FLAG(std::string, socket_group, "",
          "group (name or gid) that owns the socket, so a non-root broker in it can connect; "
          "the peer uid is still checked against --allowed-uids");
ABSL_FLAG(std::string, allowed_uids, "", "comma-separated peer uids allowed to call");
ABSL_FLAG(std::string, system_ro_dirs, "",
          "comma-separated read-only system base for native sandboxes "
          "(default /usr,/bin,/sbin,/lib,/lib32,/lib64,/libx32,/etc)");
ABSL_FLAG(std::string, bwrap, "", "bwrap binary (default: searched on PATH)");
ABSL_FLAG(std::string, create_guard, "on",
          "on: enforce filename-pattern denies at creation time where the kernel allows it; "
          "off: never (plans that need it are then refused, never run weaker)");
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

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "sandbox_launcherd --socket=PATH --allowed-uids=UID[,UID...] [--system-ro-dirs=...]");
  ParseDashedCommandLine(argc, argv);
  CaptureProtobufParseErrors();  // before any thread starts
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ launcher: %v");

  const std::string socket_path = absl::GetFlag(FLAGS_socket);
  std::vector<uid_t> allowed;
  for (absl::string_view part :
       absl::StrSplit(absl::GetFlag(FLAGS_allowed_uids), ',', absl::SkipWhitespace())) {
    uint32_t uid;
    if (!absl::SimpleAtoi(part, &uid)) {
      spdlog::critical("--allowed-uids: '{}' is not a uid", std::string(part));
      return 2;
    }
    allowed.push_back(uid);
  }
  if (socket_path.empty() || allowed.empty()) {
    spdlog::critical("--socket and --allowed-uids are required");
    return 2;
  }
  for (uid_t uid : allowed) {
    if (absl::StatusOr<std::optional<Identity>> id = IdentityFor(uid); !id.ok()) {
      spdlog::critical("--allowed-uids: {}", std::string(id.status().message()));
      return 2;
    }
  }

  LauncherConfig config;
  config.socket_dir = socket_path.substr(0, socket_path.rfind('/'));
  if (config.socket_dir.empty()) config.socket_dir = "/";
  if (char resolved[PATH_MAX]; realpath(config.socket_dir.c_str(), resolved) != nullptr) {
    config.socket_dir = resolved;
  }
  const std::string ro = absl::GetFlag(FLAGS_system_ro_dirs);
  config.system_ro_dirs = ro.empty() ? policy::DefaultSystemRoDirs()
                                     : std::vector<std::string>(absl::StrSplit(
                                           ro, ',', absl::SkipWhitespace()));
  const std::string bwrap = absl::GetFlag(FLAGS_bwrap);
  const char* path_env = getenv("PATH");
  config.bwrap_path = FindExecutable(bwrap.empty() ? "bwrap" : bwrap,
                                     path_env ? path_env : "/usr/bin:/bin")
                          .value_or("");
  if (config.bwrap_path.empty()) {
    spdlog::warn("bwrap not found on PATH: native plans will be refused "
                 "(install: apt-get install bubblewrap socat)");
  }

  config.shim_path = absl::GetFlag(FLAGS_shim);
  if (config.shim_path.empty()) {
    if (char self[PATH_MAX]; realpath("/proc/self/exe", self) != nullptr) {
      const std::string dir = std::string(self).substr(0, std::string(self).rfind('/'));
      config.shim_path = dir + "/sandbox_shim";
    }
  }
  if (access(config.shim_path.c_str(), X_OK) != 0) {
    spdlog::warn("sandbox_shim not found at '{}': plans with egress will be refused",
                 config.shim_path);
    config.shim_path.clear();
  }

  config.stream_stall_limit = absl::GetFlag(FLAGS_stream_stall_timeout);
  if (config.stream_stall_limit <= absl::ZeroDuration()) {
    spdlog::critical("--stream-stall-timeout: must be positive");
    return 2;
  }
  for (const std::string& program :
       {std::string("/proc/self/exe"), config.shim_path, config.bwrap_path}) {
    if (char resolved[PATH_MAX]; !program.empty() && realpath(program.c_str(), resolved)) {
      const std::string path(resolved);
      config.own_dirs.push_back(path.substr(0, std::max<size_t>(path.rfind('/'), 1)));
    }
  }
  // Each run covers the socket directory with its staging tmpfs (in its own mount namespace):
  // it must hold nothing a sandbox is built from.
  std::vector<std::string> built_from = config.own_dirs;
  built_from.insert(built_from.end(), config.system_ro_dirs.begin(), config.system_ro_dirs.end());
  for (const std::string& dir : built_from) {
    if (config.socket_dir == "/" || IsUnderOrEqual(dir, config.socket_dir) ||
        IsUnderOrEqual(config.socket_dir, dir)) {
      spdlog::critical("--socket: its directory '{}' overlaps '{}', which sandboxes are built "
                       "from; put the socket in a directory of its own (e.g. /run/ccsandbox)",
                       config.socket_dir, dir);
      return 2;
    }
  }
  config.root_sandbox_uid = absl::GetFlag(FLAGS_root_sandbox_uid);
  config.root_sandbox_gid = absl::GetFlag(FLAGS_root_sandbox_gid);
  if (geteuid() == 0 && std::find(allowed.begin(), allowed.end(), 0) != allowed.end()) {
    absl::StatusOr<UniqueFd> userns =
        MakeIdmapUserns(config.root_sandbox_uid, config.root_sandbox_gid);
    if (!userns.ok()) {
      spdlog::critical("--root-sandbox-uid/--root-sandbox-gid: {}",
                       std::string(userns.status().message()));
      return 2;
    }
    config.idmap_userns = std::move(*userns);
    spdlog::info("root callers' sandboxes run as host uid {} gid {} (uid 0 inside), binds idmapped",
                 config.root_sandbox_uid, config.root_sandbox_gid);
  }

  const std::string create_guard = absl::GetFlag(FLAGS_create_guard);
  if (create_guard == "on") {
    CreateGuardSupport support = ProbeCreateGuard();
    config.create_guard_available = support.available && !config.shim_path.empty();
    config.create_guard_reason =
        config.shim_path.empty() ? "sandbox_shim not found" : support.reason;
  } else if (create_guard == "off") {
    config.create_guard_reason = "turned off by --create-guard=off";
  } else {
    spdlog::critical("--create-guard: '{}' is neither on nor off", create_guard);
    return 2;
  }
  spdlog::info("filename-pattern denies at creation time: {}{}",
               config.create_guard_available ? "" : "UNAVAILABLE: ",
               config.create_guard_reason);

  // Every native run gets the seccomp baseline: no filter, no launcher.
  absl::StatusOr<std::string> seccomp = SeccompBaselineProgram();
  if (!seccomp.ok()) {
    spdlog::critical("{}", std::string(seccomp.status().message()));
    return 1;
  }
  config.seccomp_program = std::move(*seccomp);

  // SIGPIPE from a closed stdin pipe must not kill the launcher; SIGINT/SIGTERM are taken
  // by a dedicated thread for an orderly shutdown.
  BlockStopSignals();

  absl::StatusOr<std::unique_ptr<PeerListener>> listener = PeerListener::Bind(socket_path);
  if (!listener.ok()) {
    spdlog::critical("{}", std::string(listener.status().message()));
    return 1;
  }
  if (const std::string group = absl::GetFlag(FLAGS_socket_group); !group.empty()) {
    gid_t gid = 0;
    if (!absl::SimpleAtoi(group, &gid)) {
      const struct group* g = getgrnam(group.c_str());
      if (g == nullptr) {
        spdlog::critical("--socket-group: no group '{}'", group);
        return 2;
      }
      gid = g->gr_gid;
    }
    if (chown(socket_path.c_str(), static_cast<uid_t>(-1), gid) != 0) {
      spdlog::critical("--socket-group: cannot give '{}' to gid {}", socket_path, gid);
      return 1;
    }
  }

  RunRegistry registry;
  std::map<uid_t, std::unique_ptr<LauncherService>> services;
  std::map<uid_t, std::unique_ptr<grpc::Server>> servers;
  for (uid_t uid : allowed) {
    services[uid] = std::make_unique<LauncherService>(config, registry, uid);
    grpc::ServerBuilder builder;
    ApplyServerLimits(builder);
    builder.RegisterService(services[uid].get());
    servers[uid] = builder.BuildAndStart();
  }
  DenyAllService deny_service("this uid is not allowed to use the sandbox launcher");
  grpc::ServerBuilder deny_builder;
  deny_builder.RegisterCallbackGenericService(&deny_service);
  std::unique_ptr<grpc::Server> deny_server = deny_builder.BuildAndStart();
  DenyAllService sandboxed_service(
      "callers inside a sandbox may not use the sandbox launcher (nested pid namespace)");
  grpc::ServerBuilder sandboxed_builder;
  sandboxed_builder.RegisterCallbackGenericService(&sandboxed_service);
  std::unique_ptr<grpc::Server> sandboxed_server = sandboxed_builder.BuildAndStart();

  std::thread stopper([&] {
    const int sig = WaitForStopSignal();
    spdlog::info("signal {}: stopping; running sandboxes are killed", sig);
    (*listener)->Stop();
  });

  spdlog::info("listening on {} for uid(s) {}; bwrap {}", socket_path,
               absl::StrJoin(allowed, ","),
               config.bwrap_path.empty() ? "missing" : config.bwrap_path);
  (*listener)->Serve([&](UniqueFd conn, const ucred& peer) {
    if (absl::Status outside = CheckPeerOutsideSandboxes(peer); !outside.ok()) {
      spdlog::warn("refused connection from uid {} pid {}: {}", peer.uid, peer.pid,
                   std::string(outside.message()));
      grpc::AddInsecureChannelFromFd(sandboxed_server.get(), conn.Release());
      return;
    }
    auto it = servers.find(peer.uid);
    if (it == servers.end()) {
      spdlog::warn("refused connection from uid {} pid {}: not in --allowed-uids", peer.uid,
                   peer.pid);
      grpc::AddInsecureChannelFromFd(deny_server.get(), conn.Release());
      return;
    }
    grpc::AddInsecureChannelFromFd(it->second.get(), conn.Release());
  });

  registry.KillAll("launcher shutting down");
  for (auto& [uid, server] : servers) {
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  }
  deny_server->Shutdown(std::chrono::system_clock::now());
  sandboxed_server->Shutdown(std::chrono::system_clock::now());
  stopper.join();
  listener->reset();
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace ccsandbox::launcher

int main(int argc, char** argv) { return ccsandbox::launcher::Main(argc, argv); }
