#include "launcher/sandbox_process.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::launcher {
namespace {

// What the child reports through the exec-error pipe when a step before exec fails.
struct ChildFailure {
  int step;
  int err;
};

constexpr const char* kSteps[] = {"setsid",      "dup2",         "setgroups",  "setresgid",
                                  "setresuid",   "prctl",        "chdir",      "close_range",
                                  "execve",      "unshare(CLONE_NEWNS)", "mount(private)",
                                  "mount(stage tmpfs)", "create stage target", "move_mount"};

[[noreturn]] void ChildFail(int fd, int step) {
  ChildFailure failure{step, errno};
  (void)!write(fd, &failure, sizeof(failure));
  _exit(127);
}

}  // namespace

std::optional<std::string> FindExecutable(const std::string& name, const std::string& path_env) {
  if (name.find('/') != std::string::npos) return name;
  for (absl::string_view dir : absl::StrSplit(path_env, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<SandboxProcess>> SandboxProcess::Spawn(const ProcessSpec& spec) {
  int in[2], out[2], err[2], report[2];
  if (pipe2(in, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  UniqueFd in_r(in[0]), in_w(in[1]);
  if (pipe2(out, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  UniqueFd out_r(out[0]), out_w(out[1]);
  if (pipe2(err, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  UniqueFd err_r(err[0]), err_w(err[1]);
  if (pipe2(report, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  UniqueFd report_r(report[0]), report_w(report[1]);

  // Everything the child touches is prepared here. The child shares our memory (vfork:
  // copying the launcher's page tables for fork cost ~4 ms per run), so it only makes
  // plain system calls; identity changes go through syscall(2) because glibc's wrappers
  // would try to change the identity of the launcher's other threads too.
  std::vector<char*> argv, envp;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : spec.envp) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  const char* exe = spec.executable.c_str();
  const bool switch_identity = spec.identity.has_value();
  const Identity identity = spec.identity.value_or(Identity{});
  const std::vector<int> inherit = spec.inherit_fds;
  const char* stage_dir = spec.stage_dir.empty() ? nullptr : spec.stage_dir.c_str();
  const std::vector<StagedMount>& staged = spec.staged;

  const pid_t parent = getpid();
  const int report_fd = report_w.get();
  const int in_fd = in_r.get(), out_fd = out_w.get(), err_fd = err_w.get();
  // No signal handler may run in the child while it shares our memory.
  sigset_t all, saved, none;
  sigfillset(&all);
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  const pid_t pid = vfork();
  if (pid == 0) {
    const int fd = report_fd;
    for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (setsid() < 0) ChildFail(fd, 0);
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) ChildFail(fd, 1);
    if (stage_dir != nullptr) {
      // Private: nothing mounted here propagates to the host's mount table.
      if (unshare(CLONE_NEWNS) != 0) ChildFail(fd, 9);
      if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ChildFail(fd, 10);
      if (mount("tmpfs", stage_dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755") != 0) {
        ChildFail(fd, 11);
      }
      for (const StagedMount& m : staged) {
        if (m.directory) {
          if (mkdir(m.target.c_str(), 0755) != 0) ChildFail(fd, 12);
        } else {
          const int f = open(m.target.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
          if (f < 0) ChildFail(fd, 12);
          close(f);
        }
        if (syscall(SYS_move_mount, m.tree_fd, "", AT_FDCWD, m.target.c_str(),
                    MOVE_MOUNT_F_EMPTY_PATH) != 0) {
          ChildFail(fd, 13);
        }
      }
    }
    if (switch_identity) {
      if (syscall(SYS_setgroups, identity.groups.size(), identity.groups.data()) != 0) {
        ChildFail(fd, 2);
      }
      if (syscall(SYS_setresgid, identity.gid, identity.gid, identity.gid) != 0) ChildFail(fd, 3);
      if (syscall(SYS_setresuid, identity.uid, identity.uid, identity.uid) != 0) ChildFail(fd, 4);
    }
    // Set after the identity change, which clears it: the child dies with the launcher.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) ChildFail(fd, 5);
    if (getppid() != parent) _exit(127);
    if (cwd != nullptr && chdir(cwd) != 0) ChildFail(fd, 6);
    // gRPC's threads may have opened fds without O_CLOEXEC: none may leak into the sandbox.
    if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) ChildFail(fd, 7);
    for (int keep : inherit) {
      if (keep <= 2 || fcntl(keep, F_SETFD, 0) != 0) ChildFail(fd, 7);
    }
    execve(exe, argv.data(), envp.data());
    ChildFail(fd, 8);
  }
  const int vfork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) return absl::InternalError(absl::StrCat("vfork failed: ", strerror(vfork_errno)));

  auto process = std::unique_ptr<SandboxProcess>(new SandboxProcess());
  process->pid_ = pid;
  report_w.Reset();
  ChildFailure failure{};
  ssize_t n;
  do {
    n = read(report_r.get(), &failure, sizeof(failure));
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof(failure))) {
    process->Reap().IgnoreError();
    return absl::FailedPreconditionError(absl::StrCat("cannot start ", spec.executable, ": ",
                                                      kSteps[failure.step], ": ",
                                                      strerror(failure.err)));
  }
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    return absl::InternalError(absl::StrCat("pidfd_open failed: ", strerror(errno)));
  }
  process->pidfd_.Reset(pidfd);
  process->stdin_ = std::move(in_w);
  process->stdout_ = std::move(out_r);
  process->stderr_ = std::move(err_r);
  fcntl(process->stdin_.get(), F_SETFL, O_NONBLOCK);
  return process;
}

SandboxProcess::~SandboxProcess() {
  if (!reaped_ && pid_ > 0) {
    SignalGroup(SIGKILL);
    Reap().IgnoreError();
  }
}

void SandboxProcess::SignalGroup(int sig) {
  if (reaped_ || pid_ <= 0) return;
  // The leader is unreaped, so its pid (= the group id) cannot have been recycled.
  kill(-pid_, sig);
}

absl::StatusOr<int> SandboxProcess::Reap() {
  if (reaped_) return absl::FailedPreconditionError("already reaped");
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  reaped_ = true;
  if (r < 0) return absl::InternalError(absl::StrCat("waitpid: ", strerror(errno)));
  return status;
}

}  // namespace ccsandbox::launcher
