// sandbox_shim: runs inside the sandbox, between bwrap and the command.
//
//   sandbox_shim [--bridge=127.0.0.1:PORT=/run/ccsandbox/http.sock ...]
//                [--create-guard=FD [--free-create=DIR ...] [--writable=DIR ...]] -- CMD [ARGS...]
//   sandbox_shim --init=FD [--bridge=...] [--create-guard=per-exec ...]
//   sandbox_shim --git-credential=PORT get        (git's credential helper: git_credential.h)
//
// (shim_args.h owns the argument format.)
//
// Starts the network bridges (listening before the command runs), runs the command as its
// child, relays until the command exits, and exits with the command's status (128+signal
// when it was killed), so bwrap reports it unchanged. Everything the command leaves behind
// dies with the sandbox's PID namespace.
//
// With --create-guard, the child applies create-time enforcement of the filename-pattern
// denies before exec (create_guard/in_sandbox.h: Landlock, the create filter, the notify fd sent
// to the launcher over FD). The shim itself stays outside both layers: it only bridges.
// If the guard cannot be applied the command is not run (exit 126).
//
// With --init, the shim is a warm sandbox's init instead (init.h): the same bridges, and each
// Exec comes over FD with its own guard channel.
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "asio.hpp"
#include "launcher/create_guard/in_sandbox.h"
#include "launcher/shim/git_credential.h"
#include "launcher/shim/init.h"
#include "launcher/shim/net_bridge.h"
#include "launcher/shim/oom_victim.h"
#include "launcher/shim/shim_args.h"

namespace ccsandbox::launcher {
namespace {

int Fail(const std::string& message) {
  fprintf(stderr, "sandbox_shim: %s\n", message.c_str());
  return 126;
}

int Main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]).rfind(kGitCredentialFlag, 0) == 0) {
    return RunGitCredentialHelper(std::string(argv[1]).substr(sizeof(kGitCredentialFlag) - 1),
                                  argv[2]);
  }
  absl::StatusOr<ShimCommandLine> line =
      ParseShimArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (!line.ok()) return Fail(std::string(line.status().message()));
  const std::vector<BridgeRoute>& routes = line->args.bridges;
  const CreateGuardShimConfig& guard = line->args.create_guard;
  char** const command = argv + 1 + line->command_start;
  // Nothing but the guarded child may hold the channel, and the command never does.
  for (int fd : {guard.channel_fd, line->args.init_fd}) {
    if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
      return Fail("fd " + std::to_string(fd) + " is not open");
    }
  }

  asio::io_context io;
  absl::StatusOr<std::unique_ptr<NetBridge>> bridge = NetBridge::Create(io, routes);
  if (!bridge.ok()) return Fail(std::string(bridge.status().message()));
  if (line->args.init_fd >= 0) {
    (*bridge)->Start();
    return RunInit(io, line->args.init_fd, guard);
  }
  asio::signal_set child_exit(io, SIGCHLD);

  const pid_t child = fork();
  if (child < 0) return Fail(std::string("fork: ") + strerror(errno));
  if (child == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGCHLD, SIG_DFL);
    PreferAsOomVictim();
    if (guard.channel_fd >= 0) {
      if (absl::Status applied = ApplyCreateGuard(guard); !applied.ok()) {
        fprintf(stderr, "sandbox_shim: %s\n", std::string(applied.message()).c_str());
        _exit(126);
      }
    }
    // The bridge's listening sockets stay the bridge's: a command holding them could accept
    // the connections meant for the proxies.
    syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
    execvp(command[0], command);
    fprintf(stderr, "sandbox_shim: cannot run %s: %s\n", command[0], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  if (guard.channel_fd >= 0) close(guard.channel_fd);

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
