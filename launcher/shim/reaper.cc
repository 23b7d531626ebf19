#include "launcher/shim/reaper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "launcher/create_guard/in_sandbox.h"
#include "launcher/create_guard/landlock.h"
#include "launcher/shim/oom_victim.h"

extern char** environ;

namespace ccsandbox::launcher {
namespace {

int ShellCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

[[noreturn]] void FailCommand(const std::string& message, int code) {
  fprintf(stderr, "sandbox_shim: %s\n", message.c_str());
  _exit(code);
}

// The command's side of the fork: never returns.
[[noreturn]] void StartCommand(const ReaperRequest& request) {
  setsid();
  PreferAsOomVictim();  // before the create guard, whose Landlock domain may deny /proc writes
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGCHLD, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  if (dup2(request.stdin_fd, 0) < 0 || dup2(request.stdout_fd, 1) < 0 ||
      dup2(request.stderr_fd, 2) < 0) {
    _exit(126);
  }
  if (request.guard.channel_fd >= 0) {
    if (absl::Status applied = ApplyCreateGuard(request.guard, request.guard_program);
        !applied.ok()) {
      FailCommand(std::string(applied.message()), 126);
    }
  } else if (absl::Status scoped = ScopeSignals(); !scoped.ok() && !absl::IsUnavailable(scoped)) {
    FailCommand(std::string(scoped.message()), 126);
  }
  if (!request.workdir.empty() && chdir(request.workdir.c_str()) != 0) {
    FailCommand("cannot enter the working directory " + request.workdir + ": " + strerror(errno),
                126);
  }
  // Nothing of the init's or the reaper's reaches the command.
  syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
  std::vector<char*> argv, env;
  for (const std::string& arg : request.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (const std::string& var : request.env) env.push_back(const_cast<char*>(var.c_str()));
  env.push_back(nullptr);
  environ = env.data();  // execvp searches the command's own PATH
  execvp(argv[0], argv.data());
  FailCommand("cannot run " + request.argv[0] + ": " + strerror(errno),
              errno == ENOENT ? 127 : 126);
}

// How long the kill loop may take before the reaper gives up (and ends the sandbox).
constexpr absl::Duration kKillLimit = absl::Seconds(10);

// The reaper cannot keep its promise: dying by a signal tells the init to end the sandbox.
[[noreturn]] void FailClosed(const std::string& why) {
  fprintf(stderr, "sandbox_shim: reaper: %s; ending the sandbox\n", why.c_str());
  raise(SIGKILL);
  _exit(125);  // not reached
}

// Kills every descendant until none is left, reaping them all; records the command's code if
// it is reaped meanwhile. As a subreaper, once waitpid has no child left, no descendant is.
void KillAll(pid_t command, std::optional<int>& code, int sigchld_fd) {
  const absl::Time limit = absl::Now() + kKillLimit;
  for (;;) {
    absl::StatusOr<std::vector<int>> descendants = Descendants(getpid());
    if (!descendants.ok()) FailClosed(std::string(descendants.status().message()));
    if (absl::Now() > limit) FailClosed("the Exec's processes did not all end");
    for (int pid : *descendants) kill(pid, SIGKILL);
    bool reaped = false;
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      reaped = true;
      if (pid == command && !code.has_value()) code = ShellCode(status);
    }
    if (pid < 0 && errno == ECHILD) return;
    if (!reaped) {
      pollfd wait{sigchld_fd, POLLIN, 0};
      poll(&wait, 1, 20);
      signalfd_siginfo info;
      while (read(sigchld_fd, &info, sizeof(info)) > 0) {
      }
    }
  }
}

void SignalAll(int sig) {
  absl::StatusOr<std::vector<int>> descendants = Descendants(getpid());
  if (!descendants.ok()) FailClosed(std::string(descendants.status().message()));
  for (int pid : *descendants) kill(pid, sig);
}

}  // namespace

absl::StatusOr<std::vector<int>> Descendants(int ancestor, const std::string& proc_root) {
  std::multimap<int, int> children;  // ppid -> pid
  DIR* dir = opendir(proc_root.c_str());
  if (dir == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot list ", proc_root, ": ", strerror(errno)));
  }
  absl::Cleanup close_dir = [dir] { closedir(dir); };
  while (dirent* entry = readdir(dir)) {
    int pid;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    const std::string path = absl::StrCat(proc_root, "/", entry->d_name, "/stat");
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT || errno == ESRCH) continue;  // it ended meanwhile
      return absl::UnavailableError(absl::StrCat("cannot read ", path, ": ", strerror(errno)));
    }
    char buf[1024];
    const ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) continue;  // a process that ended between open and read
    const std::string text(buf, static_cast<size_t>(n));
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 1));
    std::string state;
    int ppid = 0;
    if (rest >> state >> ppid) children.emplace(ppid, pid);
  }
  std::vector<int> found;
  std::vector<int> frontier{ancestor};
  while (!frontier.empty()) {
    const int parent = frontier.back();
    frontier.pop_back();
    auto [begin, end] = children.equal_range(parent);
    for (auto it = begin; it != end; ++it) {
      found.push_back(it->second);
      frontier.push_back(it->second);
    }
  }
  return found;
}

int RunReaper(const ReaperRequest& request) {
  prctl(PR_SET_NAME, "exec-reaper");  // tells it from the init in ps
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  signal(SIGCHLD, SIG_DFL);
  for (int fd : request.cgroup_fds) {
    // Never run the command outside the cgroup it was promised.
    if (write(fd, "0", 1) != 1) {
      dprintf(request.stderr_fd, "sandbox_shim: cannot join the Exec's cgroup: %s\n",
              strerror(errno));
      return 126;
    }
    close(fd);
  }
  const int sigchld_fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigchld_fd < 0) {
    dprintf(request.stderr_fd, "sandbox_shim: signalfd: %s\n", strerror(errno));
    return 126;
  }
  const pid_t command = fork();
  if (command == 0) StartCommand(request);
  if (command < 0) {
    dprintf(request.stderr_fd, "sandbox_shim: fork: %s\n", strerror(errno));
    return 126;
  }
  // The command's ends are the command's: this side keeps none of them.
  for (int fd :
       {request.stdin_fd, request.stdout_fd, request.stderr_fd, request.guard.channel_fd}) {
    if (fd >= 0) close(fd);
  }
  std::optional<int> code;
  for (;;) {
    pollfd fds[2] = {{request.control_fd, POLLIN, 0}, {sigchld_fd, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents != 0) {
      signalfd_siginfo info;
      while (read(sigchld_fd, &info, sizeof(info)) > 0) {
      }
      int status;
      pid_t pid;
      while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == command) code = ShellCode(status);
      }
      if (code.has_value()) break;  // the command is done: its leftovers are not
    }
    if (fds[0].revents != 0) {
      int sig = 0;
      const ssize_t got = read(request.control_fd, &sig, sizeof(sig));
      if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) break;  // the init is gone
      if (got == sizeof(sig) && sig == SIGKILL) break;
      if (got == sizeof(sig) && sig > 0 && sig < 65) SignalAll(sig);
    }
  }
  KillAll(command, code, sigchld_fd);
  return code.value_or(128 + SIGKILL);
}

}  // namespace ccsandbox::launcher
