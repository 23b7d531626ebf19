#include "launcher/sandbox_process.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
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

constexpr const char* kSteps[] = {"setsid",
                                  "dup2",
                                  "setgroups",
                                  "setresgid",
                                  "setresuid",
                                  "prctl",
                                  "chdir",
                                  "close_range",
                                  "execve",
                                  "unshare(CLONE_NEWNS)",
                                  "mount(private)",
                                  "mount(stage tmpfs)",
                                  "create stage target",
                                  "move_mount",
                                  "join cgroup",
                                  "ioctl(TIOCSCTTY)"};

[[noreturn]] void ChildFail(int fd, int step) {
  ChildFailure failure{step, errno};
  (void)!write(fd, &failure, sizeof(failure));
  _exit(127);
}

// Everything the child needs, prepared before vfork: the child shares our memory, so it only
// reads this and makes plain system calls.
struct ChildPlan {
  std::vector<char*> argv;
  std::vector<char*> envp;
  const char* cwd = nullptr;
  const char* exe = nullptr;
  bool switch_identity = false;
  Identity identity;
  std::vector<int> inherit;
  const char* stage_dir = nullptr;
  const std::vector<StagedMount>* staged = nullptr;
  std::vector<const char*> cgroup_procs;
  pid_t parent = 0;
  int report_fd = -1;
  int in_fd = -1, out_fd = -1, err_fd = -1;
  bool controlling_tty = false;  // stdin is a PTY slave to make the session's terminal
};

// In the child: a private mount namespace with the staged trees attached under a tmpfs.
void StageMountsInChild(const ChildPlan& plan) {
  const int fd = plan.report_fd;
  // Private: nothing mounted here propagates to the host's mount table.
  if (unshare(CLONE_NEWNS) != 0) ChildFail(fd, 9);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ChildFail(fd, 10);
  if (mount("tmpfs", plan.stage_dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755") != 0) {
    ChildFail(fd, 11);
  }
  for (const StagedMount& m : *plan.staged) {
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

// In the child, after vfork: session, stdio, staged mounts, identity, death signal, cwd, fds,
// exec. Identity changes go through syscall(2) because glibc's wrappers would try to change the
// identity of the launcher's other threads too.
[[noreturn]] void RunChild(const ChildPlan& plan) {
  const int fd = plan.report_fd;
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (setsid() < 0) ChildFail(fd, 0);
  // Into its cgroups first, as root: everything it starts is counted, limited and killable
  // there (the sandbox cannot leave them).
  for (const char* procs : plan.cgroup_procs) {
    const int f = open(procs, O_WRONLY | O_CLOEXEC);
    if (f < 0 || write(f, "0", 1) != 1) ChildFail(fd, 14);
    close(f);
  }
  if (dup2(plan.in_fd, 0) < 0 || dup2(plan.out_fd, 1) < 0 || dup2(plan.err_fd, 2) < 0) {
    ChildFail(fd, 1);
  }
  if (plan.controlling_tty && ioctl(0, TIOCSCTTY, 0) != 0) ChildFail(fd, 15);
  if (plan.stage_dir != nullptr) StageMountsInChild(plan);
  if (plan.switch_identity) {
    const Identity& id = plan.identity;
    if (syscall(SYS_setgroups, id.groups.size(), id.groups.data()) != 0) ChildFail(fd, 2);
    if (syscall(SYS_setresgid, id.gid, id.gid, id.gid) != 0) ChildFail(fd, 3);
    if (syscall(SYS_setresuid, id.uid, id.uid, id.uid) != 0) ChildFail(fd, 4);
  }
  // Set after the identity change, which clears it: the child dies with the launcher.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) ChildFail(fd, 5);
  if (getppid() != plan.parent) _exit(127);
  if (plan.cwd != nullptr && chdir(plan.cwd) != 0) ChildFail(fd, 6);
  // gRPC's threads may have opened fds without O_CLOEXEC: none may leak into the sandbox.
  if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) ChildFail(fd, 7);
  for (int keep : plan.inherit) {
    if (keep <= 2 || fcntl(keep, F_SETFD, 0) != 0) ChildFail(fd, 7);
  }
  execve(plan.exe, plan.argv.data(), plan.envp.data());
  ChildFail(fd, 8);
}

absl::StatusOr<std::pair<UniqueFd, UniqueFd>> Pipe() {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2 failed: ", strerror(errno)));
  }
  return std::make_pair(UniqueFd(ends[0]), UniqueFd(ends[1]));
}

}  // namespace

std::optional<std::string> FindExecutable(const std::string& name, const std::string& path_env) {
  if (name.find('/') != std::string::npos) return name;
  for (absl::string_view dir : absl::StrSplit(path_env, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<SandboxProcess>> SandboxProcess::Spawn(const ProcessSpec& spec) {
  const bool tty = spec.tty_fd >= 0;
  // A terminal's stdio is its PTY: no pipes.
  auto stdio_pipe = [tty]() -> absl::StatusOr<std::pair<UniqueFd, UniqueFd>> {
    if (tty) return std::make_pair(UniqueFd(), UniqueFd());
    return Pipe();
  };
  absl::StatusOr<std::pair<UniqueFd, UniqueFd>> in = stdio_pipe(), out = stdio_pipe(),
                                                err = stdio_pipe(), report = Pipe();
  for (const auto* p : {&in, &out, &err, &report}) {
    if (!p->ok()) return p->status();
  }
  UniqueFd in_w = std::move(in->second), out_r = std::move(out->first),
           err_r = std::move(err->first), report_r = std::move(report->first),
           report_w = std::move(report->second);

  // Everything the child touches is prepared here. The child shares our memory (vfork:
  // copying the launcher's page tables for fork cost ~4 ms per run).
  ChildPlan plan;
  for (const std::string& a : spec.argv) plan.argv.push_back(const_cast<char*>(a.c_str()));
  plan.argv.push_back(nullptr);
  for (const std::string& e : spec.envp) plan.envp.push_back(const_cast<char*>(e.c_str()));
  plan.envp.push_back(nullptr);
  plan.cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  plan.exe = spec.executable.c_str();
  plan.switch_identity = spec.identity.has_value();
  plan.identity = spec.identity.value_or(Identity{});
  plan.inherit = spec.inherit_fds;
  plan.stage_dir = spec.stage_dir.empty() ? nullptr : spec.stage_dir.c_str();
  plan.staged = &spec.staged;
  for (const std::string& procs : spec.cgroup_procs) plan.cgroup_procs.push_back(procs.c_str());
  plan.parent = getpid();
  plan.report_fd = report_w.get();
  plan.in_fd = tty ? spec.tty_fd : in->first.get();
  plan.out_fd = tty ? spec.tty_fd : out->second.get();
  plan.err_fd = tty ? spec.tty_fd : err->second.get();
  plan.controlling_tty = tty;
  // No signal handler may run in the child while it shares our memory.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  const pid_t pid = vfork();
  if (pid == 0) RunChild(plan);
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
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot start ", spec.executable, ": ", kSteps[failure.step], ": ", strerror(failure.err)));
  }
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    return absl::InternalError(absl::StrCat("pidfd_open failed: ", strerror(errno)));
  }
  process->pidfd_.Reset(pidfd);
  process->stdin_ = std::move(in_w);
  process->stdout_ = std::move(out_r);
  process->stderr_ = std::move(err_r);
  if (!tty) fcntl(process->stdin_.get(), F_SETFL, O_NONBLOCK);
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
