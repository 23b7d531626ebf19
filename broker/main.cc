// sandbox_brokerd: the unprivileged daemon that server components call. Probes the host
// once, logs exactly one boot line, keeps sessions and runs their commands on the launcher.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "broker/broker_service.h"
#include "broker/host_probe.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "launcher/dashed_flags.h"
#include "policy/probe.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, listen, "", "address to serve on: unix:PATH (socket mode 0660)");
ABSL_FLAG(std::string, launcher, "", "the launcher's address: unix:PATH");
ABSL_FLAG(std::string, sandbox, "",
          "on (default: wrap whenever the host offers a backend) or off; "
          "CC_SERVER_SANDBOX is read when the flag is not given");

extern char** environ;

namespace ccsandbox::broker {
namespace {

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "sandbox_brokerd --listen=unix:PATH --launcher=unix:PATH [--sandbox=on|off]");
  ParseDashedCommandLine(argc, argv);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ broker: %v");

  const std::string listen = absl::GetFlag(FLAGS_listen);
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
  spdlog::info("{}", config.status_line);

  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  BrokerService service(config);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials());
  const mode_t old_mask = umask(0117);  // the socket is created 0660
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  umask(old_mask);
  if (server == nullptr) {
    spdlog::critical("cannot listen on {}", listen);
    return 1;
  }
  spdlog::info("listening on {}; launcher at {}", listen, config.launcher_address);

  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    spdlog::info("signal {}: stopping; running commands are cancelled", sig);
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
  server->Wait();
  stopper.join();
  if (absl::StartsWith(listen, "unix:")) unlink(listen.substr(5).c_str());
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace ccsandbox::broker

int main(int argc, char** argv) { return ccsandbox::broker::Main(argc, argv); }
