// sandbox_shim: runs inside the sandbox, between bwrap and the command.
//
//   sandbox_shim [--bridge=127.0.0.1:PORT=/run/ccsandbox/http.sock ...] -- CMD [ARGS...]
//
// Starts the network bridges (listening before the command runs), runs the command as its
// child, relays until the command exits, and exits with the command's status (128+signal
// when it was killed), so bwrap reports it unchanged. Everything the command leaves behind
// dies with the sandbox's PID namespace.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "asio.hpp"
#include "launcher/net_bridge.h"

namespace ccsandbox::launcher {
namespace {

int Fail(const std::string& message) {
  fprintf(stderr, "sandbox_shim: %s\n", message.c_str());
  return 126;
}

int Main(int argc, char** argv) {
  std::vector<BridgeRoute> routes;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.rfind("--bridge=", 0) == 0) {
      absl::StatusOr<BridgeRoute> route = ParseBridgeRoute(arg.substr(9));
      if (!route.ok()) return Fail(std::string(route.status().message()));
      routes.push_back(*route);
      continue;
    }
    return Fail("unknown argument '" + arg + "' (usage: sandbox_shim [--bridge=...] -- CMD)");
  }
  if (i >= argc) return Fail("no command given");

  asio::io_context io;
  absl::StatusOr<std::unique_ptr<NetBridge>> bridge = NetBridge::Create(io, routes);
  if (!bridge.ok()) return Fail(std::string(bridge.status().message()));
  asio::signal_set child_exit(io, SIGCHLD);

  const pid_t child = fork();
  if (child < 0) return Fail(std::string("fork: ") + strerror(errno));
  if (child == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGCHLD, SIG_DFL);
    execvp(argv[i], argv + i);
    fprintf(stderr, "sandbox_shim: cannot run %s: %s\n", argv[i], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }

  int status = 0;
  std::function<void(const asio::error_code&, int)> on_child;
  on_child = [&](const asio::error_code& error, int) {
    if (error) return;
    if (waitpid(child, &status, WNOHANG) == child) {
      io.stop();
      return;
    }
    child_exit.async_wait(on_child);
  };
  child_exit.async_wait(on_child);
  (*bridge)->Start();
  // The child may have exited before the signal set was armed: check once.
  if (waitpid(child, &status, WNOHANG) != child) io.run();
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace
}  // namespace ccsandbox::launcher

int main(int argc, char** argv) { return ccsandbox::launcher::Main(argc, argv); }
