// Real cgroups of this host (v1 controllers here; v2 where the host has it): limits hold, the
// counters say why, freezing stops a process, KillAll ends everything, nothing is left.
#include "launcher/cgroups/cgroup.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::launcher {
namespace {

// Waits for `count` bytes on `fd`: each process of a test says "in place" with one.
void AwaitReady(int fd, int count) {
  char c;
  for (int i = 0; i < count; ++i) ASSERT_EQ(read(fd, &c, 1), 1) << "process " << i << " not ready";
}

// A child that joins `cgroup`, then runs `body` and exits with its result.
pid_t ChildIn(const Cgroup& cgroup, const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    for (const std::string& file : cgroup.ProcsFiles()) {
      const int fd = open(file.c_str(), O_WRONLY);
      if (fd < 0 || write(fd, "0", 1) != 1) _exit(99);
      close(fd);
    }
    _exit(body());
  }
  return pid;
}

// A child in `cg` writes to a pipe every 10 ms (an orphan of its below it): freezing stops its
// output, thawing resumes it, and KillAll ends both.
void ExpectFreezeStopsAndThawResumes(Cgroup& cg) {
  ASSERT_TRUE(cg.CanFreeze());
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = ChildIn(cg, [&] {
    if (fork() == 0) pause();
    for (;;) {
      if (write(fds[1], "x", 1) != 1) return 1;
      usleep(10000);
    }
  });
  close(fds[1]);
  char c;
  ASSERT_EQ(read(fds[0], &c, 1), 1);
  ASSERT_TRUE(cg.Freeze(true).ok());  // returns once every task has stopped
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  char drain[4096];
  while (read(fds[0], drain, sizeof(drain)) > 0) {
  }
  pollfd readable{fds[0], POLLIN, 0};
  EXPECT_EQ(poll(&readable, 1, 500), 0) << "output while frozen";
  ASSERT_TRUE(cg.Freeze(false).ok());
  EXPECT_EQ(poll(&readable, 1, 2000), 1) << "no output once thawed";
  ASSERT_TRUE(cg.KillAll().ok());
  int status;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  close(fds[0]);
}

class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) CCSANDBOX_SKIP_OR_FAIL_IN_CI("cgroups need root");
    absl::StatusOr<CgroupHierarchy> tree =
        CgroupHierarchy::Detect(absl::StrCat("ccsandbox-test-", getpid()));
    if (!tree.ok()) CCSANDBOX_SKIP_OR_FAIL_IN_CI(std::string(tree.status().message()));
    tree_.emplace(*std::move(tree));
  }
  void TearDown() override {
    if (!tree_.has_value()) return;
    tree_->RemoveLeftovers();
    for (const CgroupDir& root : tree_->roots()) rmdir(root.path.c_str());
  }

  pid_t Child(const Cgroup& cgroup, const std::function<int()>& body) {
    return ChildIn(cgroup, body);
  }

  std::optional<CgroupHierarchy> tree_;
};

TEST_F(CgroupTest, APidsLimitStopsAForkBombAndItsHitsAreCounted) {
  absl::StatusOr<std::unique_ptr<Cgroup>> cg = tree_->Create("bomb");
  ASSERT_TRUE(cg.ok()) << cg.status();
  ASSERT_TRUE((*cg)->SetLimits({.pids_max = 16}).ok());
  const pid_t pid = Child(**cg, [] {
    int made = 0;
    for (int i = 0; i < 100; ++i) {
      const pid_t p = fork();
      if (p == 0) {
        pause();
        _exit(0);
      }
      if (p > 0) ++made;
    }
    return made;
  });
  int status;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 15) << "the child itself is one of the 16";
  absl::StatusOr<CgroupUsage> usage = (*cg)->Usage();
  ASSERT_TRUE(usage.ok());
  EXPECT_GE(usage->pids_max_hits, 85u);
  // The high-water mark, where the kernel keeps one (pids.peak): the limit, reached.
  const std::vector<CgroupDir>& dirs = (*cg)->dirs();
  if (std::any_of(dirs.begin(), dirs.end(), [](const CgroupDir& dir) {
        return access((dir.path + "/pids.peak").c_str(), F_OK) == 0;
      })) {
    EXPECT_EQ(usage->pids_peak, 16u);
  }
  // Its paused children were orphaned: only the cgroup still knows them.
  ASSERT_TRUE((*cg)->KillAll().ok());
  EXPECT_TRUE((*cg)->Remove().ok());
}

TEST_F(CgroupTest, AMemoryLimitEndsTheProcessWithAnOomKillCounted) {
  absl::StatusOr<std::unique_ptr<Cgroup>> cg = tree_->Create("oom");
  ASSERT_TRUE(cg.ok()) << cg.status();
  ASSERT_TRUE((*cg)->SetLimits({.memory_max_bytes = 32 << 20}).ok());
  const pid_t pid = Child(**cg, [] {
    const size_t size = 256 << 20;
    char* p = static_cast<char*>(
        mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (p == MAP_FAILED) return 2;
    memset(p, 1, size);
    return 0;
  });
  int status;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  absl::StatusOr<CgroupUsage> usage = (*cg)->Usage();
  ASSERT_TRUE(usage.ok());
  EXPECT_GE(usage->oom_kills, 1u);
  EXPECT_GT(usage->memory_peak_bytes, 16u << 20);
  EXPECT_TRUE((*cg)->Remove().ok());
}

// v1 counts socket buffers apart from memory.limit_in_bytes, and only once they are limited:
// the memory limit bounds them too.
TEST_F(CgroupTest, AMemoryLimitBoundsSocketBuffersToo) {
  absl::StatusOr<std::unique_ptr<Cgroup>> cg = tree_->Create("sockets");
  ASSERT_TRUE(cg.ok()) << cg.status();
  ASSERT_TRUE((*cg)->SetLimits({.memory_max_bytes = 32 << 20}).ok());
  if ((*cg)->version() != CgroupVersion::kV1) GTEST_SKIP() << "v2 counts them in memory.max";
  const std::string tcp_limit = [&] {
    for (const CgroupDir& dir : (*cg)->dirs()) {
      std::ifstream in(dir.path + "/memory.kmem.tcp.limit_in_bytes");
      std::string value;
      if (in >> value) return value;
    }
    return std::string();
  }();
  if (tcp_limit.empty()) GTEST_SKIP() << "this kernel has no v1 socket-buffer limit";
  EXPECT_EQ(tcp_limit, std::to_string(32 << 20));
  EXPECT_TRUE((*cg)->Remove().ok());
}

TEST_F(CgroupTest, AFrozenCgroupStopsAndResumes) {
  absl::StatusOr<std::unique_ptr<Cgroup>> cg = tree_->Create("freeze");
  ASSERT_TRUE(cg.ok()) << cg.status();
  if (!(*cg)->CanFreeze()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no freezer on this host");
  ExpectFreezeStopsAndThawResumes(**cg);
}

TEST_F(CgroupTest, KillAllEndsEveryProcessBelowIncludingChildCgroups) {
  absl::StatusOr<std::unique_ptr<Cgroup>> session = tree_->Create("session");
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<std::unique_ptr<Cgroup>> run = tree_->Create("run", session->get());
  ASSERT_TRUE(run.ok()) << run.status();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t in_session = Child(**session, [&] {
    (void)!write(ready[1], "s", 1);
    pause();
    return 0;
  });
  const pid_t in_run = Child(**run, [&] {
    setsid();
    if (fork() == 0) {  // an orphan the test never sees
      (void)!write(ready[1], "o", 1);
      pause();
    }
    (void)!write(ready[1], "r", 1);
    pause();
    return 0;
  });
  close(ready[1]);
  AwaitReady(ready[0], 3);
  close(ready[0]);
  ASSERT_TRUE((*session)->KillAll().ok());
  int status;
  EXPECT_EQ(waitpid(in_session, &status, 0), in_session);
  EXPECT_EQ(waitpid(in_run, &status, 0), in_run);
  run->reset();
  EXPECT_TRUE((*session)->Remove().ok());
  for (const CgroupDir& dir : (*session)->dirs()) {
    EXPECT_NE(access(dir.path.c_str(), F_OK), 0) << dir.path << " is left";
  }
}

TEST_F(CgroupTest, LeftoversOfADeadLauncherAreKilledAndRemoved) {
  absl::StatusOr<std::unique_ptr<Cgroup>> cg = tree_->Create("left");
  ASSERT_TRUE(cg.ok());
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t pid = Child(**cg, [&] {
    (void)!write(ready[1], "r", 1);
    pause();
    return 0;
  });
  close(ready[1]);
  AwaitReady(ready[0], 1);
  close(ready[0]);
  const std::vector<CgroupDir> dirs = (*cg)->dirs();
  (*cg)->Forget();  // as if the launcher had died: nobody kills or removes it
  cg->reset();
  EXPECT_EQ(tree_->RemoveLeftovers(), 1);
  int status;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  for (const CgroupDir& dir : dirs) EXPECT_NE(access(dir.path.c_str(), F_OK), 0) << dir.path;
}

// The v2 code's kill, freeze and membership, on the unified hierarchy of a hybrid host (which
// has no controllers to limit with, but cgroup.kill and cgroup.freeze work in it).
TEST(CgroupV2Test, KillAndFreezeWorkOnTheUnifiedHierarchy) {
  if (geteuid() != 0) CCSANDBOX_SKIP_OR_FAIL_IN_CI("cgroups need root");
  std::ifstream in("/proc/self/mountinfo");
  const std::string mountinfo((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
  std::ifstream self_in("/proc/self/cgroup");
  std::string v2_line;
  for (std::string line; std::getline(self_in, line);) {
    if (line.rfind("0::", 0) == 0) v2_line = line;
  }
  // Only the cgroup2 mount and the v2 membership: the v2 code path, controllers claimed.
  std::string v2_mounts;
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" - cgroup2 ") != std::string::npos) v2_mounts += line + "\n";
  }
  if (v2_mounts.empty() || v2_line.empty()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no cgroup2 mount");
  absl::StatusOr<CgroupHierarchy> tree = CgroupHierarchy::FromTables(
      v2_mounts, v2_line + "\n", absl::StrCat("ccsandbox-v2-test-", getpid()),
      [](const std::string&) { return std::string("memory pids"); });
  ASSERT_TRUE(tree.ok()) << tree.status();
  ASSERT_EQ(tree->version(), CgroupVersion::kV2);
  const std::string root = tree->roots()[0].path;
  ASSERT_EQ(mkdir(root.c_str(), 0755), 0) << root << ": " << strerror(errno);
  {
    absl::StatusOr<std::unique_ptr<Cgroup>> cg = tree->Create("run");
    ASSERT_TRUE(cg.ok()) << cg.status();
    ExpectFreezeStopsAndThawResumes(**cg);
  }  // removed
  EXPECT_EQ(rmdir(root.c_str()), 0) << "a cgroup was left below " << root;
}

}  // namespace
}  // namespace ccsandbox::launcher
