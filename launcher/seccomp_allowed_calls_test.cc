// What the seccomp baseline must leave alone: ordinary calls (files, processes, threads, harmless
// ioctls, modes without set-id bits), each run for real in a child under the filter.
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "launcher/seccomp_test_support.h"

namespace ccsandbox::launcher {
namespace {

using testing::ChildResult;
using testing::ControllingPty;
using testing::ErrnoOf;
using testing::Program;
using testing::RunInChild;

struct AllowedCall {
  std::string name;
  std::function<int()> run;  // 0 when it worked, else an errno or a step number
};

std::vector<AllowedCall> AllowedCalls() {
  return {
      {"open_write_read",
       [] {
         char path[] = "/tmp/ccsandbox-seccomp-XXXXXX";
         const int fd = mkstemp(path);
         if (fd < 0) return errno;
         unlink(path);
         char buf[3] = {};
         if (write(fd, "abc", 3) != 3 || pread(fd, buf, 3, 0) != 3) return errno;
         close(fd);
         return std::memcmp(buf, "abc", 3) == 0 ? 0 : -2;
       }},
      {"clone_without_newuser",
       [] {
         const long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
         if (pid == 0) _exit(7);
         if (pid < 0) return errno;
         int status;
         waitpid(static_cast<pid_t>(pid), &status, 0);
         return WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0 : -2;
       }},
      {"unshare_without_newuser", [] { return ErrnoOf(unshare(CLONE_FILES | CLONE_FS)); }},
      // The caller's own limits and priority; reading another's limits.
      {"setrlimit_self",
       [] {
         rlimit current;
         getrlimit(RLIMIT_NOFILE, &current);
         return ErrnoOf(setrlimit(RLIMIT_NOFILE, &current));
       }},
      {"prlimit_read_other",
       [] {
         rlimit current;
         return ErrnoOf(prlimit(getppid(), RLIMIT_NOFILE, nullptr, &current));
       }},
      {"nice_self",
       [] { return ErrnoOf(setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0))); }},
      {"sched_setaffinity_self",
       [] {
         cpu_set_t set;
         sched_getaffinity(0, sizeof(set), &set);
         return ErrnoOf(sched_setaffinity(0, sizeof(set), &set));
       }},
      {"fork_exec_true",
       [] {
         const pid_t pid = fork();
         if (pid == 0) {
           execl("/bin/true", "true", nullptr);
           _exit(127);
         }
         if (pid < 0) return errno;
         int status;
         waitpid(pid, &status, 0);
         return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -2;
       }},
      {"posix_spawn_true",
       [] {
         pid_t pid;
         char* argv[] = {const_cast<char*>("true"), nullptr};
         if (int rc = posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ); rc != 0) {
           return rc;
         }
         int status;
         waitpid(pid, &status, 0);
         return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -2;
       }},
      // glibc's pthread_create tries clone3, then clone on ENOSYS.
      {"thread",
       [] {
         int ran = 0;
         std::thread([&] { ran = 1; }).join();
         return ran == 1 ? 0 : -2;
       }},
      {"ioctl_fionread",
       [] {
         int fds[2];
         if (pipe(fds) != 0) return errno;
         int n = -1;
         (void)!write(fds[1], "x", 1);
         return ioctl(fds[0], FIONREAD, &n) == 0 && n == 1 ? 0 : errno;
       }},
      // Without O_CREAT or O_TMPFILE the mode is ignored: no rule applies.
      {"open_existing_with_setid_mode",
       [] {
         const long fd = syscall(SYS_open, "/etc/passwd", O_RDONLY | O_CLOEXEC, 06755);
         if (fd < 0) return errno;
         close(static_cast<int>(fd));
         return 0;
       }},
      {"chmod_sticky_dir",
       [] {
         char path[] = "/tmp/ccsandbox-seccomp-XXXXXX";
         if (mkdtemp(path) == nullptr) return errno;
         const int rc = ErrnoOf(chmod(path, 01777));
         struct stat st;
         const bool sticky = stat(path, &st) == 0 && (st.st_mode & 07777) == 01777;
         rmdir(path);
         return rc != 0 ? rc : sticky ? 0 : -2;
       }},
      // TIOCGWINSZ is TIOCSTI + 1: the masked compare spares neighbours.
      {"ioctl_tiocgwinsz",
       [] {
         winsize ws;
         return ErrnoOf(ioctl(ControllingPty(), TIOCGWINSZ, &ws));
       }},
  };
}

void PrintTo(const AllowedCall& call, std::ostream* os) { *os << call.name; }

class AllowedCallTest : public ::testing::TestWithParam<AllowedCall> {};

TEST_P(AllowedCallTest, WorksUnderTheFilter) {
  ASSERT_FALSE(Program().empty());
  const ChildResult result = RunInChild(&Program(), GetParam().run);
  ASSERT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0)
      << "wait status " << result.status;
  EXPECT_EQ(result.value, 0);
}

INSTANTIATE_TEST_SUITE_P(Baseline, AllowedCallTest, ::testing::ValuesIn(AllowedCalls()),
                         [](const ::testing::TestParamInfo<AllowedCall>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace ccsandbox::launcher
