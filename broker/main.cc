// sandbox_brokerd: the unprivileged daemon that server components call. Probes the host
// once, logs exactly one boot line, keeps sessions and runs their commands on the launcher.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "broker/broker_service.h"
#include "broker/host_probe.h"
#include "broker/launcher_link.h"
#include "broker/launcher_probe.h"
#include "broker/policy_service.h"
#include "broker/runtime_dir.h"
#include "broker/spec_paths.h"
#include "grpcpp/server_posix.h"
#include "base/deny_all_service.h"
#include "base/peer_check.h"
#include "base/peer_listener.h"
#include "base/stop_signals.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "base/dashed_flags.h"
#include "policy/plan/filename_policy.h"
#include "policy/plan/probe.h"
#include "proto/grpc_limits.h"
#include "proxy/connection_budget.h"
#include "proxy/event_loop.h"
#include "proxy/resolver.h"
#include "proxy/static_resolver.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, listen, "", "address to serve on: unix:PATH (socket mode 0660)");
ABSL_FLAG(std::string, launcher, "", "the launcher's address: unix:PATH");
ABSL_FLAG(std::string, sandbox, "",
          "on (default: wrap whenever the host offers a backend) or off; "
          "CC_SERVER_SANDBOX is read when the flag is not given");

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
ABSL_FLAG(std::string, egress_hosts_file, "",
          "TESTS ONLY: the egress proxies resolve names from this hosts(5)-style file instead "
          "of DNS, and every other name fails");

extern char** environ;

namespace ccsandbox::broker {
namespace {

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "sandbox_brokerd --listen=unix:PATH --launcher=unix:PATH [--sandbox=on|off]");
  ParseDashedCommandLine(argc, argv);
  CaptureProtobufParseErrors();  // before any thread starts
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ broker: %v");

  // Before any thread starts (the proxies' loop, resolver pool, gRPC): every thread inherits
  // the mask, so SIGINT/SIGTERM reach only the stopper below and shutdown is orderly.
  BlockStopSignals();
  // Every session's proxies and streams cost descriptors: take all the kernel allows us, so
  // one busy session does not starve Launch and the others (per-session caps bound the rest).
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

  const std::string listen = absl::GetFlag(FLAGS_listen);
  proxy::EventLoop proxy_loop;
  BrokerConfig config;
  config.launcher_address = absl::GetFlag(FLAGS_launcher);
  if (listen.empty() || config.launcher_address.empty()) {
    spdlog::critical("--listen and --launcher are required");
    return 2;
  }
  std::string sandbox = absl::GetFlag(FLAGS_sandbox);
  if (sandbox.empty()) {
    const char* env = getenv("CC_SERVER_SANDBOX");
    sandbox = env != nullptr && *env != '\0' ? env : "on";
  }
  if (sandbox != "on" && sandbox != "off") {
    spdlog::critical("--sandbox / CC_SERVER_SANDBOX: '{}' is neither on nor off", sandbox);
    return 2;
  }
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) config.host_env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  const char* path_env = getenv("PATH");
  config.host.sandbox_enabled = sandbox == "on";
  config.host.probe = policy::EvaluateProbe(GatherHostFacts(path_env ? path_env : ""));
  config.status_line = policy::BootLine(config.host.probe, config.host.sandbox_enabled);
  if (config.host.sandbox_enabled && config.host.probe.available()) {
    // Whether writable Linux runs can have their filename-pattern denies is the launcher's
    // to say: ask it (it is normally up first), and put the answer on the one boot line.
    grpc::ChannelArguments probe_args;
    ApplyChannelLimits(probe_args);
    auto stub = v1::SandboxLauncher::NewStub(
        grpc::CreateCustomChannel(config.launcher_address, grpc::InsecureChannelCredentials(),
                                  probe_args));
    config.create_guard =
        CreateGuardStateFrom(ProbeLauncher(*stub, std::chrono::milliseconds(3000)));
    absl::StrAppend(&config.status_line, "; ",
                    policy::FilenameEnforcementNote(config.create_guard.known,
                                                    config.create_guard.available,
                                                    config.create_guard.reason));
  }
  spdlog::info("{}", config.status_line);


  // Egress: one resolver for every session's proxies (the loop is declared first: the resolver
  // posts to it, so it must go last).
  const std::string hosts_file = absl::GetFlag(FLAGS_egress_hosts_file);
  if (hosts_file.empty()) {
    config.resolver = std::make_shared<proxy::SystemResolver>();
  } else {
    auto fixed = std::make_shared<proxy::StaticResolver>();
    if (absl::Status loaded = fixed->AddHostsFile(hosts_file); !loaded.ok()) {
      spdlog::critical("--egress-hosts-file: {}", std::string(loaded.message()));
      return 2;
    }
    spdlog::warn("egress names resolve from {} only (--egress-hosts-file is for tests)",
                 hosts_file);
    config.resolver = std::move(fixed);
  }
  std::string runtime_root = absl::GetFlag(FLAGS_runtime_dir);
  if (runtime_root.empty()) runtime_root = RuntimeDir::DefaultRoot();
  absl::StatusOr<std::unique_ptr<RuntimeDir>> runtime_dir = RuntimeDir::Open(runtime_root);
  if (!runtime_dir.ok()) {
    spdlog::critical("{}", std::string(runtime_dir.status().message()));
    return 2;
  }
  config.proxy_loop = &proxy_loop;
  config.egress_limits.per_session = absl::GetFlag(FLAGS_egress_max_connections_per_session);
  config.egress_limits.total = absl::GetFlag(FLAGS_egress_max_connections);
  if (config.egress_limits.total == 0) {
    config.egress_limits.total = proxy::DefaultConnectionBudget(fd_limit);
  }
  if (config.egress_limits.per_session == 0) {
    spdlog::critical("--egress-max-connections-per-session: must be positive");
    return 2;
  }
  config.exec_stall_limit = absl::GetFlag(FLAGS_exec_stall_timeout);
  if (config.exec_stall_limit <= absl::ZeroDuration()) {
    spdlog::critical("--exec-stall-timeout: must be positive");
    return 2;
  }
  spdlog::info("egress connection limits: {} per session, {} in total (open-file limit {})",
               config.egress_limits.per_session, config.egress_limits.total, fd_limit);
  config.runtime_dir = runtime_dir->get();
  // The control plane is out of reach of every bind, however it is spelled.
  config.forbidden_dirs = policy::ControlPlaneDirs();
  for (const auto& [dir, what] :
       {std::pair{UnixSocketDir(config.launcher_address), "the launcher's socket directory"},
        std::pair{UnixSocketDir(listen), "the broker's listen directory"},
        std::pair{UnixSocketDir("unix:" + (*runtime_dir)->root() + "/x"),
                  "the broker's runtime directory"}}) {
    if (!dir.empty()) config.forbidden_dirs.push_back({dir, what});
  }

  BrokerService service(config, ConnectLauncher(config.launcher_address));
  PolicyService policy_service;
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  ApplyServerLimits(builder);
  builder.RegisterService(&service);
  builder.RegisterService(&policy_service);
  // A Unix socket is served through our own listener, so every connection's peer is known
  // (SO_PEERCRED): a caller inside a sandbox is refused however it reached the socket.
  const bool unix_listen = absl::StartsWith(listen, "unix:");
  std::unique_ptr<PeerListener> listener;
  if (unix_listen) {
    absl::StatusOr<std::unique_ptr<PeerListener>> bound =
        PeerListener::Bind(listen.substr(5));
    if (!bound.ok()) {
      spdlog::critical("--listen: {}", std::string(bound.status().message()));
      return 1;
    }
    listener = *std::move(bound);
  } else {
    builder.AddListeningPort(listen, grpc::InsecureServerCredentials());
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    spdlog::critical("cannot listen on {}", listen);
    return 1;
  }
  DenyAllService sandboxed_service(
      "callers inside a sandbox may not use the sandbox broker (nested pid namespace)");
  grpc::ServerBuilder sandboxed_builder;
  sandboxed_builder.RegisterCallbackGenericService(&sandboxed_service);
  std::unique_ptr<grpc::Server> sandboxed_server = sandboxed_builder.BuildAndStart();
  spdlog::info("listening on {}; launcher at {}", listen, config.launcher_address);

  std::thread stopper([&] {
    const int sig = WaitForStopSignal();
    spdlog::info("signal {}: stopping; running commands are cancelled", sig);
    if (listener != nullptr) listener->Stop();
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
  if (listener != nullptr) {
    listener->Serve([&](UniqueFd conn, const ucred& peer) {
      if (absl::Status outside = CheckPeerOutsideSandboxes(peer); !outside.ok()) {
        spdlog::warn("refused connection from uid {} pid {}: {}", peer.uid, peer.pid,
                     std::string(outside.message()));
        grpc::AddInsecureChannelFromFd(sandboxed_server.get(), conn.Release());
        return;
      }
      grpc::AddInsecureChannelFromFd(server.get(), conn.Release());
    });
  }
  server->Wait();
  stopper.join();
  sandboxed_server->Shutdown(std::chrono::system_clock::now());
  listener.reset();  // removes the socket file
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace ccsandbox::broker

int main(int argc, char** argv) { return ccsandbox::broker::Main(argc, argv); }
