#include "tests/process_exit.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace ccsandbox::testing {
namespace {

// A child that waits for its stdin to close: it ends exactly when the test says so.
pid_t ChildUntilEof(int* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[1]);
    char c;
    while (read(fds[0], &c, 1) > 0) {
    }
    _exit(0);
  }
  close(fds[0]);
  *write_end = fds[1];
  return pid;
}

TEST(ExitsWithin, FalseWhileItRunsTrueOnceItExitedEvenUnreaped) {
  int write_end = -1;
  const pid_t pid = ChildUntilEof(&write_end);
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(ExitsWithin(pid, absl::Milliseconds(50)));
  close(write_end);
  EXPECT_TRUE(ExitsWithin(pid, absl::Seconds(30)));  // a zombie until waited for
  EXPECT_TRUE(ExitsWithin(pid, absl::ZeroDuration()));
  int status = -1;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
}

TEST(ExitsWithin, TrueForAPidThatIsGone) {
  int write_end = -1;
  const pid_t pid = ChildUntilEof(&write_end);
  ASSERT_GT(pid, 0);
  close(write_end);
  ASSERT_EQ(waitpid(pid, nullptr, 0), pid);
  EXPECT_TRUE(ExitsWithin(pid, absl::ZeroDuration()));
}

}  // namespace
}  // namespace ccsandbox::testing
