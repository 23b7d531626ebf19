#include "launcher/macos/spawned_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"

#if defined(__APPLE__)
#include <sys/event.h>
#else
#include <sys/syscall.h>
#endif

namespace ccsandbox::launcher::macos {
namespace {

// A pipe whose ends are both close-on-exec (the child gets its end by dup2 only).
absl::Status Pipe(UniqueFd& read_end, UniqueFd& write_end) {
  int fds[2];
#if defined(__linux__)
  const int made = pipe2(fds, O_CLOEXEC);  // atomically: no other thread's child inherits them
#else
  const int made = pipe(fds);  // every child we spawn closes what it was not given anyway
#endif
  if (made != 0) return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  read_end = UniqueFd(fds[0]);
  write_end = UniqueFd(fds[1]);
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  return absl::OkStatus();
}

// An fd that turns readable when `pid` has ended.
absl::StatusOr<UniqueFd> ExitFd(pid_t pid) {
#if defined(__APPLE__)
  UniqueFd kq(kqueue());
  if (!kq.valid()) return absl::InternalError(absl::StrCat("kqueue: ", strerror(errno)));
  struct kevent change;
  EV_SET(&change, pid, EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0, nullptr);
  if (kevent(kq.get(), &change, 1, nullptr, 0, nullptr) != 0) {
    // Already gone (ESRCH): make the queue readable now, so the caller reaps at once.
    EV_SET(&change, 1, EVFILT_USER, EV_ADD | EV_ONESHOT, NOTE_TRIGGER, 0, nullptr);
    if (kevent(kq.get(), &change, 1, nullptr, 0, nullptr) != 0) {
      return absl::InternalError(absl::StrCat("kevent: ", strerror(errno)));
    }
  }
  return kq;
#else
  const int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return absl::InternalError(absl::StrCat("pidfd_open: ", strerror(errno)));
  return UniqueFd(fd);
#endif
}

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SpawnedProcess>> SpawnedProcess::Spawn(const SpawnSpec& spec) {
  if (spec.executable.empty() || spec.executable[0] != '/' || spec.argv.empty()) {
    return absl::InvalidArgumentError("spawn: an absolute executable and an argv are needed");
  }
  std::unique_ptr<SpawnedProcess> process(new SpawnedProcess());
  UniqueFd child_stdin, child_stdout, child_stderr;
  for (absl::Status s : {Pipe(child_stdin, process->stdin_), Pipe(process->stdout_, child_stdout),
                         Pipe(process->stderr_, child_stderr)}) {
    if (!s.ok()) return s;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  absl::Cleanup done = [&] {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  };
  posix_spawn_file_actions_adddup2(&actions, child_stdin.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, child_stdout.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, child_stderr.get(), 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  // Its own session and process group: SignalGroup reaches everything it starts.
  short flags = POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
#if defined(__APPLE__)
  flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;  // every fd not named above is closed
#else
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
  posix_spawnattr_setflags(&attr, flags);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  std::vector<char*> argv = CStrings(spec.argv);
  std::vector<char*> envp = CStrings(spec.envp);
  pid_t pid = -1;
  const int err =
      posix_spawn(&pid, spec.executable.c_str(), &actions, &attr, argv.data(), envp.data());
  if (err != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("spawning ", spec.executable, ": ", strerror(err)));
  }
  process->pid_ = pid;
  absl::StatusOr<UniqueFd> exit_fd = ExitFd(pid);
  if (!exit_fd.ok()) return exit_fd.status();  // the destructor kills and reaps it
  process->exit_ = *std::move(exit_fd);
  return process;
}

SpawnedProcess::~SpawnedProcess() {
  if (pid_ > 0 && !reaped_) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);  // before it has made its group, the group is not there yet
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void SpawnedProcess::SignalGroup(int sig) {
  if (pid_ <= 0 || reaped_) return;
  if (kill(-pid_, sig) != 0) kill(pid_, sig);
}

absl::StatusOr<int> SpawnedProcess::Reap() {
  if (reaped_) return absl::FailedPreconditionError("already reaped");
  int status = 0;
  for (;;) {
    if (waitpid(pid_, &status, 0) == pid_) break;
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid: ", strerror(errno)));
  }
  reaped_ = true;
  return status;
}

}  // namespace ccsandbox::launcher::macos
