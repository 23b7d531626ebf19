// sandbox_brokerd: the unprivileged daemon that server components call. Probes the host
// once, logs exactly one boot line, keeps sessions and runs their commands on the launcher.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/daemon_logging.h"
#include "base/dashed_flags.h"
#include "base/deny_all_service.h"
#include "base/metrics.h"
#include "base/metrics_flags.h"
#include "base/paths.h"
#include "base/peer_check.h"
#include "base/peer_listener.h"
#include "base/standard_services.h"
#include "base/stop_signals.h"
#include "base/version.h"
#include "broker/broker_metrics.h"
#include "broker/broker_service.h"
#include "broker/host_probe.h"
#include "broker/launcher_health.h"
#include "broker/launcher_link.h"
#include "broker/launcher_probe.h"
#include "broker/microvm/probe_flags.h"
#include "broker/microvm/probe_result.h"
#include "broker/policy_service.h"
#include "broker/runtime_dir.h"
#include "broker/spec_paths.h"
#include "broker/workspace_service.h"
#include "gateway/credentials.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server_posix.h"
#include "policy/plan/filename_policy.h"
#include "policy/plan/probe.h"
#include "proto/grpc_limits.h"
#include "proxy/connection_budget.h"
#include "proxy/event_loop.h"
#include "proxy/hosts_file_resolver.h"
#include "proxy/resolver.h"
#include "spdlog/spdlog.h"
#include "workspace/layout.h"
#include "workspace/workspaces.h"

ABSL_FLAG(std::string, listen, "", "address to serve on: unix:PATH (socket mode 0660)");
ABSL_FLAG(
    bool, allow_tcp_listen, false,
    "accept a --listen address that is not unix:PATH (e.g. 127.0.0.1:50051): callers are then "
    "NOT authenticated (no peer credentials over TCP); anyone who can connect may run "
    "commands as this broker");
ABSL_FLAG(std::string, launcher, "", "the launcher's address: unix:PATH");
ABSL_FLAG(std::string, sandbox, "",
          "on (default: wrap whenever the host offers a backend) or off; "
          "CC_SERVER_SANDBOX is read when the flag is not given");

ABSL_FLAG(std::string, terminal_default_backend, "none",
          "a terminal's backend when its client names none: none (the spec's default: the host "
          "shell, reported as none), native (the fixed terminal profile) or microvm (degrades to "
          "native, with a log line, where no microVM can boot)");

ABSL_FLAG(uint32_t, max_terminals, 64,
          "open terminals at most (the Terminal RPC); one more is RESOURCE_EXHAUSTED");

ABSL_FLAG(std::string, data_dir, "",
          "where conversations' copy-on-write worktrees live (the SandboxWorkspace service; "
          "docs/workspaces.md): created 0700, locked while this broker runs, on a file system "
          "with reflink shared with the repositories; empty: no workspaces");
ABSL_FLAG(std::string, runtime_dir, "",
          "private directory for the sessions' proxy sockets (default: "
          "$XDG_RUNTIME_DIR/ccsandbox-broker, else /tmp/ccsandbox-broker-UID); emptied at boot "
          "and removed at exit");
ABSL_FLAG(uint32_t, egress_max_connections_per_session, 512,
          "proxied connections one session may have open at once; more are refused (HTTP 503 / "
          "SOCKS5 failure, with a network-outbound violation)");
ABSL_FLAG(uint32_t, egress_max_connections, 0,
          "proxied connections of all sessions together (0: derived from the open-file limit, "
          "keeping a quarter of it for everything else)");
ABSL_FLAG(absl::Duration, exec_stall_timeout, absl::Seconds(60),
          "an Exec client that takes no event for this long while events wait for it is dropped "
          "as if it had disconnected: its stream is cancelled, its run (if still going) killed");
ABSL_FLAG(
    std::string, push_credentials, "",
    "what mints the push gateway's credentials: local:DIR (tokens for an upstream on this "
    "host that reads DIR/<repository>.read and .write as basic-auth files: per repository "
    "and per token), personal-token:PATH (a token in PATH that can push: the push rule is then "
    "ADVISORY); empty: a Launch with push is refused");
ABSL_FLAG(std::string, egress_hosts_file, "",
          "the egress proxies resolve names only from this hosts(5)-style file (ADDRESS NAME... "
          "per line, at most 1 MiB) instead of DNS, and every other name fails: for air-gapped "
          "hosts or fixed upstreams; a bad line stops the broker from starting");

extern char** environ;

namespace ccsandbox::broker {
namespace {

// Logs why the broker cannot start and returns its exit code (2: a bad flag or runtime
// directory, 1: it cannot listen).
int CannotStart(const absl::Status& why, int exit_code) {
  spdlog::critical("{}", std::string(why.message()));
  return exit_code;
}

// Every session's proxies and streams cost descriptors: take all the kernel allows us, so
// one busy session does not starve Launch and the others (per-session caps bound the rest).
// Returns the open-file limit in force.
size_t RaiseOpenFileLimit() {
  size_t fd_limit = 1024;
  if (rlimit fds; getrlimit(RLIMIT_NOFILE, &fds) == 0) {
    if (fds.rlim_cur < fds.rlim_max) {
      const rlim_t soft = fds.rlim_cur;
      fds.rlim_cur = fds.rlim_max;
      if (setrlimit(RLIMIT_NOFILE, &fds) != 0) {
        spdlog::warn("cannot raise the open-file limit");
        fds.rlim_cur = soft;
      }
    }
    fd_limit = fds.rlim_cur == RLIM_INFINITY ? size_t{1} << 20 : static_cast<size_t>(fds.rlim_cur);
  }
  return fd_limit;
}

// What the first flags say: where to serve, where the launcher is, whether to sandbox. The
// start-up steps after them complete `config`.
struct BrokerSetup {
  std::string listen;
  BrokerConfig config;
};

std::map<std::string, std::string> HostEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

absl::StatusOr<BrokerSetup> SetupFromFlags() {
  BrokerSetup setup;
  setup.listen = absl::GetFlag(FLAGS_listen);
  BrokerConfig& config = setup.config;
  config.launcher_address = absl::GetFlag(FLAGS_launcher);
  if (setup.listen.empty() || config.launcher_address.empty()) {
    return absl::InvalidArgumentError("--listen and --launcher are required");
  }
  if (!absl::StartsWith(setup.listen, "unix:")) {
    if (!absl::GetFlag(FLAGS_allow_tcp_listen)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--listen=", setup.listen,
          ": not a Unix socket; over TCP no caller is authenticated. Use unix:PATH, or accept "
          "that explicitly with --allow-tcp-listen"));
    }
    spdlog::warn(
        "UNAUTHENTICATED: --listen={} is not a Unix socket; every process that can "
        "connect to it can launch sandboxes and run commands as this broker",
        setup.listen);
    config.tcp_listener = setup.listen;
  }
  config.max_terminals = absl::GetFlag(FLAGS_max_terminals);
  std::string sandbox = absl::GetFlag(FLAGS_sandbox);
  if (sandbox.empty()) {
    const char* env = getenv("CC_SERVER_SANDBOX");
    sandbox = env != nullptr && *env != '\0' ? env : "on";
  }
  if (sandbox != "on" && sandbox != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("--sandbox / CC_SERVER_SANDBOX: '", sandbox, "' is neither on nor off"));
  }
  config.host_env = HostEnvironment();
  config.host.sandbox_enabled = sandbox == "on";
  config.terminal_default_backend = absl::GetFlag(FLAGS_terminal_default_backend);
  if (config.terminal_default_backend != "none" && config.terminal_default_backend != "native" &&
      config.terminal_default_backend != "microvm") {
    return absl::InvalidArgumentError(absl::StrCat("--terminal-default-backend: '",
                                                   config.terminal_default_backend,
                                                   "' is none of none, native, microvm"));
  }
  return setup;
}

// Probes the host once and logs the one boot line (with `microvm_line` when not empty).
void ProbeAndLogBootLine(BrokerConfig& config, const std::string& microvm_line) {
  const char* path_env = getenv("PATH");
  const policy::HostFacts facts = GatherHostFacts(path_env ? path_env : "");
  config.host.probe = policy::EvaluateProbe(facts);
  config.egress_listeners = EgressListenersFor(facts.os);
  config.status_line = policy::BootLine(config.host.probe, config.host.sandbox_enabled);
  const std::string native_filenames = policy::NativeFilenameEnforcement(facts);
  if (config.host.sandbox_enabled && !native_filenames.empty()) {
    absl::StrAppend(&config.status_line, "; ", native_filenames);
  } else if (config.host.sandbox_enabled && config.host.probe.available()) {
    // Whether writable Linux runs can have their filename-pattern denies is the launcher's
    // to say: ask it (it is normally up first), and put the answer on the one boot line.
    grpc::ChannelArguments probe_args;
    ApplyChannelLimits(probe_args);
    auto stub = v1::SandboxLauncher::NewStub(grpc::CreateCustomChannel(
        config.launcher_address, grpc::InsecureChannelCredentials(), probe_args));
    config.create_guard =
        CreateGuardStateFrom(ProbeLauncher(*stub, std::chrono::milliseconds(3000)));
    absl::StrAppend(
        &config.status_line, "; ",
        policy::FilenameEnforcementNote(config.create_guard.known, config.create_guard.available,
                                        config.create_guard.reason));
  }
  if (!microvm_line.empty()) absl::StrAppend(&config.status_line, "; ", microvm_line);
  spdlog::info("{}", config.status_line);
}

// One resolver for every session's proxies: DNS, or the operator's --egress-hosts-file (whose
// names the push gateway's upstreams then resolve from too: `upstream_address`).
absl::StatusOr<std::shared_ptr<proxy::Resolver>> EgressResolver(
    std::function<std::string(const std::string&)>& upstream_address) {
  const std::string hosts_file = absl::GetFlag(FLAGS_egress_hosts_file);
  if (hosts_file.empty()) return std::make_shared<proxy::SystemResolver>();
  absl::StatusOr<std::unique_ptr<proxy::HostsFileResolver>> fixed =
      proxy::HostsFileResolver::Load(hosts_file);
  if (!fixed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--egress-hosts-file: ", fixed.status().message()));
  }
  spdlog::info("egress names resolve from {} only ({} names), never from DNS", hosts_file,
               (*fixed)->size());
  std::shared_ptr<proxy::HostsFileResolver> hosts = *std::move(fixed);
  upstream_address = [hosts](const std::string& host) { return hosts->FirstAddress(host); };
  return std::shared_ptr<proxy::Resolver>(hosts);
}

// The credential broker of --push-credentials (null when none is configured).
absl::StatusOr<std::shared_ptr<gateway::CredentialBroker>> PushCredentials() {
  const std::string flag = absl::GetFlag(FLAGS_push_credentials);
  if (flag.empty()) {
    spdlog::info(
        "push gateway: no credential broker (--push-credentials): a Launch with push "
        "is refused");
    return nullptr;
  }
  absl::string_view path = flag;
  const bool local = absl::ConsumePrefix(&path, "local:");
  if (!local && !absl::ConsumePrefix(&path, "personal-token:")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--push-credentials: '", flag,
                     "': local:DIR or personal-token:FILE (GitHub App "
                     "installation tokens are not implemented yet)"));
  }
  if (absl::Status valid = CheckNormalizedAbsolute("--push-credentials", path); !valid.ok()) {
    return valid;
  }
  if (local) {
    auto broker = std::make_shared<gateway::LocalCredentialBroker>(std::string(path));
    if (absl::Status emptied = broker->RevokeLeftovers(); !emptied.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("--push-credentials: ", emptied.message()));
    }
    spdlog::info("push gateway: {}", broker->Describe());
    return broker;
  }
  absl::StatusOr<std::unique_ptr<gateway::PersonalTokenBroker>> token =
      gateway::PersonalTokenBroker::FromFile(std::string(path));
  if (!token.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--push-credentials: ", token.status().message()));
  }
  spdlog::warn("push gateway: {}", (*token)->Describe());
  return std::shared_ptr<gateway::CredentialBroker>(*std::move(token));
}

absl::StatusOr<std::unique_ptr<RuntimeDir>> OpenRuntimeDir() {
  std::string root = absl::GetFlag(FLAGS_runtime_dir);
  if (root.empty()) root = RuntimeDir::DefaultRoot();
  return RuntimeDir::Open(root);
}

// The egress connection caps (the total derived from the open-file limit unless given) and
// the Exec stall limit.
absl::Status ReadLimits(size_t fd_limit, BrokerConfig& config) {
  config.egress_limits.per_session = absl::GetFlag(FLAGS_egress_max_connections_per_session);
  config.egress_limits.total = absl::GetFlag(FLAGS_egress_max_connections);
  if (config.egress_limits.total == 0) {
    config.egress_limits.total = proxy::DefaultConnectionBudget(fd_limit);
  }
  if (config.egress_limits.per_session == 0) {
    return absl::InvalidArgumentError("--egress-max-connections-per-session: must be positive");
  }
  config.exec_stall_limit = absl::GetFlag(FLAGS_exec_stall_timeout);
  if (config.exec_stall_limit <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--exec-stall-timeout: must be positive");
  }
  spdlog::info("egress connection limits: {} per session, {} in total (open-file limit {})",
               config.egress_limits.per_session, config.egress_limits.total, fd_limit);
  return absl::OkStatus();
}

// The control plane is out of reach of every bind, however it is spelled.
policy::ForbiddenDirs ForbiddenDirsFor(const std::string& launcher_address,
                                       const std::string& listen, const RuntimeDir& runtime_dir) {
  policy::ForbiddenDirs dirs = policy::ControlPlaneDirs();
  for (const auto& [dir, what] :
       {std::pair{UnixSocketDir(launcher_address), "the launcher's socket directory"},
        std::pair{UnixSocketDir(listen), "the broker's listen directory"},
        std::pair{UnixSocketDir("unix:" + runtime_dir.root() + "/x"),
                  "the broker's runtime directory"}}) {
    if (!dir.empty()) dirs.push_back({dir, what});
  }
  return dirs;
}

// The broker's gRPC servers: its services, and one that refuses callers inside a sandbox.
class BrokerServers {
 public:
  // Serves `listen`: unix:PATH through a PeerListener, any other address on gRPC's own port.
  static absl::StatusOr<std::unique_ptr<BrokerServers>> Start(const BrokerConfig& config,
                                                              const std::string& listen);

  // Serves until SIGINT or SIGTERM, then stops in order: no new connection, calls in flight
  // get two seconds (running commands are cancelled), then the refusing server, and last the
  // socket file.
  void ServeUntilStopped();

 private:
  explicit BrokerServers(const BrokerConfig& config)
      : service_(config, ConnectLauncher(config.launcher_address)),
        policy_service_(config.workspaces),
        workspace_service_(config.workspaces, [this](const std::string& dir) {
          return service_.SessionsBinding(dir);
        }) {}

  // Hands `conn` to the server, or to the refusing one when its peer is inside a sandbox.
  void Accept(UniqueFd conn, const ucred& peer);

  BrokerService service_;
  PolicyService policy_service_;
  WorkspaceService workspace_service_;
  std::unique_ptr<PeerListener> listener_;  // null unless --listen is unix:PATH
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<LauncherHealth> launcher_health_;   // after server_: stopped before it
  std::unique_ptr<ScrapedMetrics> sessions_metrics_;  // reads service_: gone before it
  DenyAllService sandboxed_service_{
      "callers inside a sandbox may not use the sandbox broker (nested pid namespace)"};
  std::unique_ptr<grpc::Server> sandboxed_server_;
};

absl::StatusOr<std::unique_ptr<BrokerServers>> BrokerServers::Start(const BrokerConfig& config,
                                                                    const std::string& listen) {
  std::unique_ptr<BrokerServers> servers(new BrokerServers(config));
  grpc::ServerBuilder builder;
  ApplyServerLimits(builder);
  ServeStandardServices(builder);
  builder.RegisterService(&servers->service_);
  builder.RegisterService(&servers->policy_service_);
  builder.RegisterService(&servers->workspace_service_);
  // A Unix socket is served through our own listener, so every connection's peer is known
  // (SO_PEERCRED): a caller inside a sandbox is refused however it reached the socket.
  if (absl::StartsWith(listen, "unix:")) {
    absl::StatusOr<std::unique_ptr<PeerListener>> bound = PeerListener::Bind(listen.substr(5));
    if (!bound.ok()) {
      return absl::Status(bound.status().code(),
                          absl::StrCat("--listen: ", bound.status().message()));
    }
    servers->listener_ = *std::move(bound);
  } else {
    builder.AddListeningPort(listen, grpc::InsecureServerCredentials());
  }
  servers->server_ = builder.BuildAndStart();
  if (servers->server_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", listen));
  }
  servers->launcher_health_ = std::make_unique<LauncherHealth>(
      servers->service_.launcher_channel(), config.launcher_address,
      servers->server_->GetHealthCheckService(), config.metrics);
  BrokerServers* self = servers.get();
  servers->sessions_metrics_ =
      config.metrics.ServeSessions([self] { return self->service_.Sessions(); });
  servers->sandboxed_server_ = StartDenyAllServer(servers->sandboxed_service_);
  spdlog::info("listening on {}; launcher at {}", listen, config.launcher_address);
  return servers;
}

void BrokerServers::Accept(UniqueFd conn, const ucred& peer) {
  if (absl::Status outside = CheckPeerOutsideSandboxes(peer); !outside.ok()) {
    spdlog::warn("refused connection from uid {} pid {}: {}", peer.uid, peer.pid,
                 std::string(outside.message()));
    grpc::AddInsecureChannelFromFd(sandboxed_server_.get(), conn.Release());
    return;
  }
  grpc::AddInsecureChannelFromFd(server_.get(), conn.Release());
}

void BrokerServers::ServeUntilStopped() {
  std::thread stopper([this] {
    const int sig = WaitForStopSignal();
    spdlog::info("signal {}: stopping; running commands are cancelled", sig);
    if (listener_ != nullptr) listener_->Stop();
    // Clients of running commands get their `killed` event while their streams are open.
    service_.DestroyAllSessions(absl::StrCat("the broker is stopping (signal ", sig, ")"));
    launcher_health_.reset();
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
  if (listener_ != nullptr) {
    listener_->Serve([this](UniqueFd conn, const ucred& peer) { Accept(std::move(conn), peer); });
  }
  server_->Wait();
  stopper.join();
  sandboxed_server_->Shutdown(std::chrono::system_clock::now());
  listener_.reset();  // removes the socket file
}

int Main(int argc, char** argv) {
  SetVersionFlag("sandbox_brokerd");
  absl::SetProgramUsageMessage(
      "sandbox_brokerd --listen=unix:PATH --launcher=unix:PATH [--sandbox=on|off]");
  ParseDashedCommandLine(argc, argv);
  CaptureProtobufParseErrors();  // before any thread starts
  if (absl::Status logging = SetUpDaemonLogging("broker"); !logging.ok()) {
    return CannotStart(logging, 2);
  }

  // Before any thread starts (the proxies' loop, resolver pool, gRPC): every thread inherits
  // the mask, so SIGINT/SIGTERM reach only the stopper and shutdown is orderly.
  BlockStopSignals();
  const size_t fd_limit = RaiseOpenFileLimit();
  // Outlives everything that counts in its registry.
  std::unique_ptr<MetricsEndpoint> metrics;
  // Declared before the config: the resolver posts to it, so it must go last.
  proxy::EventLoop proxy_loop;

  absl::StatusOr<BrokerSetup> setup = SetupFromFlags();
  if (!setup.ok()) return CannotStart(setup.status(), 2);
  BrokerConfig& config = setup->config;
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint = StartMetricsFromFlags("broker");
  if (!endpoint.ok()) {
    return CannotStart(endpoint.status(), absl::IsInvalidArgument(endpoint.status()) ? 2 : 1);
  }
  metrics = *std::move(endpoint);
  config.metrics = BrokerMetrics(metrics.get());
  absl::StatusOr<microvm::MicrovmProbe> microvm = microvm::ProbeMicrovmFromFlags();
  if (!microvm.ok()) return CannotStart(microvm.status(), 2);
  absl::StatusOr<std::unique_ptr<microvm::Runtime>> microvm_runtime =
      microvm::RuntimeFromFlags(*microvm);
  if (!microvm_runtime.ok()) {
    // A probe boot worked, but sessions cannot run: microvm is refused, saying why.
    microvm->result.set_available(false);
    microvm->result.set_note(absl::StrCat(
        microvm->result.note(),
        "; but its session runtime cannot start: ", microvm_runtime.status().message()));
    microvm->result.add_missing("image");
    microvm->boot_line = microvm::MicrovmBootLine(microvm->result);
    microvm_runtime = nullptr;
  }
  config.host.microvm = microvm->result;
  ProbeAndLogBootLine(config, microvm->boot_line);
  std::unique_ptr<RuntimeDir> microvm_state;
  if (*microvm_runtime != nullptr) {
    absl::StatusOr<std::unique_ptr<RuntimeDir>> opened =
        RuntimeDir::Open(microvm::MicrovmStateRoot());
    if (!opened.ok()) return CannotStart(opened.status(), 2);
    microvm_state = *std::move(opened);
    config.microvm_runtime = microvm_runtime->get();
    config.microvm_state = microvm_state.get();
  }

  absl::StatusOr<std::shared_ptr<proxy::Resolver>> resolver =
      EgressResolver(config.upstream_address);
  if (!resolver.ok()) return CannotStart(resolver.status(), 2);
  config.resolver = *std::move(resolver);
  absl::StatusOr<std::unique_ptr<RuntimeDir>> runtime_dir = OpenRuntimeDir();
  if (!runtime_dir.ok()) return CannotStart(runtime_dir.status(), 2);
  config.proxy_loop = &proxy_loop;
  if (absl::Status limits = ReadLimits(fd_limit, config); !limits.ok()) {
    return CannotStart(limits, 2);
  }
  config.runtime_dir = runtime_dir->get();
  config.forbidden_dirs = ForbiddenDirsFor(config.launcher_address, setup->listen, **runtime_dir);
  if (microvm_state != nullptr) {
    // Every microVM session's sockets: no spec binds them (the broker binds each session's own
    // directory into that session's sandbox, which is why the launcher is not told).
    config.forbidden_dirs.push_back({.path = microvm_state->root(),
                                     .what = "the microVM sessions' files",
                                     .bindable_below = [](absl::string_view) { return false; }});
  }
  absl::StatusOr<std::shared_ptr<gateway::CredentialBroker>> credentials = PushCredentials();
  if (!credentials.ok()) return CannotStart(credentials.status(), 2);
  config.push_credentials = *std::move(credentials);
  if (const std::string flag = absl::GetFlag(FLAGS_push_credentials); !flag.empty()) {
    // The tokens' file is never bound into a sandbox, nor anything that holds it.
    config.forbidden_dirs.push_back({absl::StartsWith(flag, "local:")
                                         ? flag.substr(sizeof("local:") - 1)
                                         : ParentPath(flag.substr(flag.find(':') + 1)),
                                     "the push credentials' directory"});
  }

  std::unique_ptr<workspace::Workspaces> workspaces;
  if (const std::string dir = absl::GetFlag(FLAGS_data_dir); !dir.empty()) {
    absl::StatusOr<std::unique_ptr<workspace::Workspaces>> opened =
        workspace::Workspaces::Open(dir);
    if (!opened.ok()) return CannotStart(opened.status(), 2);
    workspaces = *std::move(opened);
    config.workspaces = workspaces.get();
    // A sandbox may be given one conversation's repos/ or one agent's directories, never what
    // holds another conversation or agent, nor the registry.
    config.forbidden_dirs.push_back({workspaces->data_dir().path(), "the broker's data directory",
                                     &workspace::IsBindableBelowDataDir});
    spdlog::info("workspaces in {}", workspaces->data_dir().path());
  }

  absl::StatusOr<std::unique_ptr<BrokerServers>> servers =
      BrokerServers::Start(config, setup->listen);
  if (!servers.ok()) return CannotStart(servers.status(), 1);
  (*servers)->ServeUntilStopped();
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace ccsandbox::broker

int main(int argc, char** argv) { return ccsandbox::broker::Main(argc, argv); }
