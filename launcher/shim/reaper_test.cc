// The reaper against the real kernel: a command's leftovers — double-forked, setsid()ed,
// ignoring SIGTERM — end when the command does, or when the init asks; none survive.
#include "launcher/shim/reaper.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace ccsandbox::launcher {
namespace {

bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (text.empty()) return false;
  const size_t close = text.rfind(')');
  return close != std::string::npos && text.substr(close + 2, 1) != "Z";
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, n);
  return out;
}

struct Started {
  pid_t reaper;
  int out;      // the command's stdout (read end)
  int control;  // write end: signals for the reaper
};

// Forks a reaper for `script` (run by sh) the way the init does.
Started StartReaper(const std::string& script) {
  int out[2], control[2];
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(control, O_CLOEXEC), 0);
  const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  const pid_t pid = fork();
  if (pid == 0) {
    close(out[0]);
    close(control[1]);
    ReaperRequest request;
    request.argv = {"sh", "-c", script};
    request.env = {"PATH=/usr/bin:/bin"};
    request.workdir = "/";
    request.stdin_fd = null;
    request.stdout_fd = out[1];
    request.stderr_fd = dup(2);
    request.control_fd = control[0];
    _exit(RunReaper(request));
  }
  close(out[1]);
  close(control[0]);
  close(null);
  return {pid, out[0], control[1]};
}

int WaitCode(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

// At the memory limit the OOM killer takes the command, not the reaper (nor the init).
TEST(ReaperTest, TheCommandIsTheOomKillersChoiceNotTheReaper) {
  Started started = StartReaper("cat /proc/self/oom_score_adj");
  std::ifstream own("/proc/" + std::to_string(started.reaper) + "/oom_score_adj");
  int reaper_adj = -1;
  own >> reaper_adj;
  EXPECT_EQ(ReadAll(started.out), "1000\n");
  EXPECT_EQ(WaitCode(started.reaper), 0);
  EXPECT_LT(reaper_adj, 1000);
  close(started.out);
  close(started.control);
}

TEST(ReaperTest, DescendantsFollowTheParentChain) {
  const pid_t child = fork();
  if (child == 0) {
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      pause();
      _exit(0);
    }
    pause();
    _exit(0);
  }
  std::vector<int> found;
  for (int i = 0; i < 200 && found.size() < 2; ++i) {
    found = Descendants(getpid()).value_or(std::vector<int>());
    usleep(5000);
  }
  EXPECT_EQ(found.size(), 2u);
  EXPECT_NE(std::find(found.begin(), found.end(), child), found.end());
  for (int pid : found) kill(pid, SIGKILL);
  waitpid(child, nullptr, 0);
}

TEST(ReaperTest, AProcRootThatCannotBeReadIsAnError) {
  EXPECT_FALSE(Descendants(getpid(), "/nonexistent-proc").ok());
}

TEST(ReaperTest, TheCommandsCodeComesBackAndItsOutputReachesItsPipe) {
  Started s = StartReaper("echo hello; exit 7");
  EXPECT_EQ(ReadAll(s.out), "hello\n");
  EXPECT_EQ(WaitCode(s.reaper), 7);
  close(s.out);
  close(s.control);
}

TEST(ReaperTest, ADoubleForkedSetsidDaemonEndsWithTheCommand) {
  // The daemon ignores TERM and HUP, leaves the session and the process group, and reports
  // its pid once its trap is set (on a pipe the command reads, its stdout still the command's);
  // the command then passes the pid on and exits at once.
  Started s = StartReaper(
      "exec 4>&1; { setsid sh -c 'trap \"\" TERM HUP; echo $$ >&3; exec sleep 1000' 3>&1 >&4 & } "
      "| { read pid; echo $pid; }; exit 3");
  std::string line;
  char c;
  while (read(s.out, &c, 1) == 1 && c != '\n') line += c;
  const pid_t daemon = std::stoi(line);
  EXPECT_EQ(WaitCode(s.reaper), 3);
  EXPECT_FALSE(Alive(daemon)) << "pid " << daemon << " survived its Exec";
  close(s.out);
  close(s.control);
}

TEST(ReaperTest, AKillRequestEndsEveryProcessOfTheExec) {
  Started s = StartReaper("setsid sleep 1000 & echo $!; exec sleep 1000");
  std::string line;
  char c;
  while (read(s.out, &c, 1) == 1 && c != '\n') line += c;
  const pid_t daemon = std::stoi(line);
  const int sig = SIGKILL;
  ASSERT_EQ(write(s.control, &sig, sizeof(sig)), static_cast<ssize_t>(sizeof(sig)));
  EXPECT_EQ(WaitCode(s.reaper), 128 + SIGKILL);
  EXPECT_FALSE(Alive(daemon));
  close(s.out);
  close(s.control);
}

TEST(ReaperTest, TheInitGoingAwayEndsTheExec) {
  Started s = StartReaper("exec sleep 1000");
  close(s.control);
  EXPECT_EQ(WaitCode(s.reaper), 128 + SIGKILL);
  close(s.out);
}

TEST(ReaperTest, ACommandThatCannotRunSaysWhy) {
  int out[2];
  ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
  int err[2];
  ASSERT_EQ(pipe2(err, O_CLOEXEC), 0);
  int control[2];
  ASSERT_EQ(pipe2(control, O_CLOEXEC), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    ReaperRequest request;
    request.argv = {"no-such-program-here"};
    request.env = {"PATH=/usr/bin:/bin"};
    request.stdin_fd = out[0];
    request.stdout_fd = out[1];
    request.stderr_fd = err[1];
    request.control_fd = control[0];
    _exit(RunReaper(request));
  }
  close(err[1]);
  close(out[1]);
  EXPECT_EQ(WaitCode(pid), 127);
  EXPECT_NE(ReadAll(err[0]).find("cannot run no-such-program-here"), std::string::npos);
  for (int fd : {out[0], err[0], control[0], control[1]}) close(fd);
}

}  // namespace
}  // namespace ccsandbox::launcher
