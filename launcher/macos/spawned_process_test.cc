// SpawnedProcess on Linux (its pidfd branch; the kqueue branch is macOS's): stdio through the
// pipes, the end seen on exit_fd, the whole group signalled, no fd of the launcher's inherited,
// spawn errors as values, and the destructor killing and reaping what is left.
#include "launcher/macos/spawned_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "launcher/macos/macos_test_support.h"
#include "tests/poll_until.h"

namespace ccsandbox::launcher::macos {
namespace {

using testing::ReadAll;

using ::ccsandbox::testing::PollUntil;

std::unique_ptr<SpawnedProcess> Sh(const std::string& script, const std::string& cwd = "") {
  absl::StatusOr<std::unique_ptr<SpawnedProcess>> p = SpawnedProcess::Spawn(
      {.executable = "/bin/sh", .argv = {"sh", "-c", script}, .envp = {"A=b"}, .cwd = cwd});
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : nullptr;
}

bool Alive(pid_t pid) { return kill(pid, 0) == 0; }

// Gone, or a zombie its new parent has not reaped yet.
bool Ended(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  return close == std::string::npos || stat.compare(close, 3, ") Z") == 0;
}

TEST(SpawnedProcess, RunsWithItsStdioEnvironmentAndDirectoryAndEndsOnExitFd) {
  std::unique_ptr<SpawnedProcess> p =
      Sh("read x; echo \"$x|$A|$(pwd)\"; echo err >&2; exit 7", "/");
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(write(p->stdin_fd(), "hi\n", 3), 3);
  p->CloseStdin();
  EXPECT_EQ(ReadAll(p->stdout_fd()), "hi|b|/\n");
  EXPECT_EQ(ReadAll(p->stderr_fd()), "err\n");
  pollfd end{p->exit_fd(), POLLIN, 0};
  ASSERT_EQ(poll(&end, 1, 30000), 1);
  absl::StatusOr<int> status = p->Reap();
  ASSERT_TRUE(status.ok());
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 7);
  p->SignalGroup(SIGKILL);  // reaped: a no-op, never a recycled pid
}

TEST(SpawnedProcess, ItsOwnSessionAndGroupAreSignalledWhole) {
  std::unique_ptr<SpawnedProcess> p = Sh("sleep 1000 & echo $!; wait");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(getsid(p->pid()), p->pid());
  EXPECT_EQ(getpgid(p->pid()), p->pid());
  std::string line;
  char c;
  while (read(p->stdout_fd(), &c, 1) == 1 && c != '\n') line += c;
  int grandchild = 0;
  ASSERT_TRUE(absl::SimpleAtoi(line, &grandchild)) << line;
  p->SignalGroup(SIGKILL);
  absl::StatusOr<int> status = p->Reap();
  ASSERT_TRUE(status.ok());
  EXPECT_TRUE(WIFSIGNALED(*status));
  // The grandchild was in the group (reparented, it may stay a zombie a moment).
  EXPECT_TRUE(PollUntil([&] { return Ended(grandchild); }, absl::Seconds(30),
                        "the grandchild to be killed with the group"));
}

TEST(SpawnedProcess, NoDescriptorOfTheLauncherIsInherited) {
  const int leaked = open("/dev/null", O_RDONLY);  // no O_CLOEXEC, on purpose
  ASSERT_GE(leaked, 3);
  std::unique_ptr<SpawnedProcess> p = Sh("ls /proc/self/fd");
  close(leaked);
  ASSERT_NE(p, nullptr);
  // 0, 1, 2 and the fd `ls` opens to read the directory.
  std::string out = ReadAll(p->stdout_fd());
  EXPECT_EQ(out, "0\n1\n2\n3\n") << out;
  ASSERT_TRUE(p->Reap().ok());
}

TEST(SpawnedProcess, SpawnErrorsAreValues) {
  absl::StatusOr<std::unique_ptr<SpawnedProcess>> missing =
      SpawnedProcess::Spawn({.executable = "/nonexistent/sandbox-exec", .argv = {"x"}});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("/nonexistent/sandbox-exec"), std::string::npos);
  absl::StatusOr<std::unique_ptr<SpawnedProcess>> bad_cwd = SpawnedProcess::Spawn(
      {.executable = "/bin/true", .argv = {"true"}, .cwd = "/nonexistent/dir"});
  EXPECT_EQ(bad_cwd.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(SpawnedProcess::Spawn({.executable = "true", .argv = {"true"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SpawnedProcess, TheDestructorKillsAndReaps) {
  pid_t pid = -1;
  {
    std::unique_ptr<SpawnedProcess> p = Sh("exec sleep 1000");
    ASSERT_NE(p, nullptr);
    pid = p->pid();
  }
  EXPECT_FALSE(Alive(pid));
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);  // already reaped: no zombie
}

}  // namespace
}  // namespace ccsandbox::launcher::macos
