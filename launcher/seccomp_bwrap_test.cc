// The seccomp baseline under bwrap, as in production: the exported fd handed over with
// `--seccomp FD` denies inside the sandbox, lets ordinary programs run, and fails closed when
// reused.
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "launcher/seccomp_baseline.h"

namespace ccsandbox::launcher {
namespace {

struct Ran {
  int status = -1;
  std::string output;  // stdout and stderr
};

// bwrap with the baseline fd inherited under its own number, as in production.
Ran RunBwrap(int seccomp_fd, const std::vector<std::string>& command) {
  std::vector<std::string> args = {"/usr/bin/bwrap",
                                   "--ro-bind",
                                   "/",
                                   "/",
                                   "--dev",
                                   "/dev",
                                   "--proc",
                                   "/proc",
                                   "--tmpfs",
                                   "/tmp",
                                   "--unshare-all",
                                   "--die-with-parent",
                                   "--seccomp",
                                   std::to_string(seccomp_fd),
                                   "--"};
  args.insert(args.end(), command.begin(), command.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string env_path = "PATH=/usr/bin:/bin", env_home = "HOME=/tmp", env_lang = "LANG=C.UTF-8";
  char* envp[] = {env_path.data(), env_home.data(), env_lang.data(), nullptr};

  Ran ran;
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return ran;
  UniqueFd out_r(out[0]), out_w(out[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 2);
  // Same number on both sides: glibc (>= 2.29, per POSIX) clears FD_CLOEXEC.
  posix_spawn_file_actions_adddup2(&actions, seccomp_fd, seccomp_fd);
  pid_t pid;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  out_w.Reset();
  if (rc != 0) {
    ran.output = absl::StrCat("posix_spawn bwrap: ", strerror(rc));
    return ran;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(out_r.get(), buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) ran.output.append(buf, n);
  }
  waitpid(pid, &ran.status, 0);
  return ran;
}

Ran RunBwrapWithFreshBaseline(const std::vector<std::string>& command) {
  absl::StatusOr<UniqueFd> fd = ExportSeccompBaseline();
  if (!fd.ok()) return Ran{-1, fd.status().ToString()};
  return RunBwrap(fd->get(), command);
}

TEST(SeccompBaselineBwrapTest, DeniesInsideTheSandbox) {
  const std::string script = absl::StrCat(R"(
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(*args):
    ctypes.set_errno(0)
    rc = libc.syscall(*[ctypes.c_long(a) for a in args])
    return 0 if rc >= 0 else ctypes.get_errno()
params = ctypes.create_string_buffer(120)
print("ptrace", call()",
                                          SYS_ptrace, ", ", PTRACE_ATTACH, R"(, os.getppid(), 0, 0))
print("io_uring_setup", call()",
                                          SYS_io_uring_setup, R"(, 4, ctypes.addressof(params)))
print("unshare_newuser", call()",
                                          SYS_unshare, ", ", CLONE_NEWUSER, R"())
print("clone3", call()",
                                          SYS_clone3, R"(, 0, 0))
print("getpid", call()",
                                          SYS_getpid, R"())
)");
  const Ran ran = RunBwrapWithFreshBaseline({"/usr/bin/python3", "-c", script});
  ASSERT_TRUE(WIFEXITED(ran.status) && WEXITSTATUS(ran.status) == 0)
      << "status " << ran.status << ": " << ran.output;
  EXPECT_EQ(ran.output,
            absl::StrCat("ptrace ", EPERM, "\nio_uring_setup ", EPERM, "\nunshare_newuser ", EPERM,
                         "\nclone3 ", ENOSYS, "\ngetpid 0\n"));
}

TEST(SeccompBaselineBwrapTest, OrdinaryProgramsRun) {
  const std::string script = R"(set -e
echo ok
ls / > /dev/null
bash -c 'echo bash $((20 + 22))'
seq 3 | sort -r | head -n 1
cd /tmp && mkdir d && cp /etc/passwd d/p && wc -l < d/p > /dev/null && rm -r d
git --version > /dev/null
git init -q repo && cd repo && echo hi > f && git add f
git -c user.name=t -c user.email=t@t commit -q -m m && git log --oneline | wc -l
python3 -c 1
python3 -c 'import subprocess, threading; t = threading.Thread(target=print, args=("py thread",)); t.start(); t.join(); subprocess.run(["true"], check=True)'
node -e 1
node -e 'require("fs").promises.readFile("/etc/passwd").then(() => { require("child_process").execFileSync("true"); console.log("node ok"); })'
)";
  const Ran ran = RunBwrapWithFreshBaseline({"/bin/sh", "-c", script});
  ASSERT_TRUE(WIFEXITED(ran.status) && WEXITSTATUS(ran.status) == 0)
      << "status " << ran.status << ": " << ran.output;
  EXPECT_EQ(ran.output, "ok\nbash 42\n3\n1\npy thread\nnode ok\n");
}

// bwrap reads the fd to EOF and dups share the offset: a reused fd must make
// bwrap fail, not run the command unfiltered.
TEST(SeccompBaselineBwrapTest, ReusedFdFailsClosed) {
  absl::StatusOr<UniqueFd> fd = ExportSeccompBaseline();
  ASSERT_TRUE(fd.ok()) << fd.status();
  const Ran first = RunBwrap(fd->get(), {"/bin/true"});
  ASSERT_TRUE(WIFEXITED(first.status) && WEXITSTATUS(first.status) == 0) << first.output;
  const Ran second = RunBwrap(fd->get(), {"/bin/echo", "ran"});
  EXPECT_FALSE(WIFEXITED(second.status) && WEXITSTATUS(second.status) == 0) << second.output;
  EXPECT_EQ(second.output.find("ran\n"), std::string::npos) << second.output;
}

}  // namespace
}  // namespace ccsandbox::launcher
