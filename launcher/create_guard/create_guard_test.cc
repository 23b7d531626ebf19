// Create-time enforcement of the filename-pattern denies on the real kernel:
// the real sandbox_shim under real bwrap (with the seccomp baseline), running
// the test helper as uid 65534 with a temp dir bound writable at /work, and the
// CreateSupervisor in this process. Needs root (tags: no-sandbox).
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "launcher/create_guard/notify_channel.h"
#include "launcher/create_guard/probe.h"
#include "launcher/create_guard/seccomp_notify.h"
#include "launcher/create_guard/supervisor.h"
#include "launcher/create_guard/testing.h"
#include "launcher/sandbox_process.h"
#include "launcher/seccomp_baseline.h"
#include "policy/plan/deny_sets.h"
#include "policy/plan/filename_patterns.h"

namespace ccsandbox::launcher {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uid_t kNobody = kSandboxUid;

class CreateGuardTest : public ::testing::Test {
 protected:
  // Fallible set-up is recorded, never asserted here: a failed SetUpTestSuite would turn
  // every test into a skip. Each test's SetUp fails with it instead.
  static void SetUpTestSuite() {
    support_ = new CreateGuardSupport(ProbeCreateGuard());
    if (!support_->available) return;
    // bwrap runs as uid 65534: the binaries must sit where it can read them.
    absl::StatusOr<std::string> bin_dir =
        MakeBinDir(absl::StrCat(getenv("TEST_SRCDIR"), "/ccsandbox"), kGuardBinaries);
    absl::StatusOr<std::string> program = SeccompBaselineProgram();
    if (bin_dir.ok()) bin_dir_ = new std::string(*bin_dir);
    if (program.ok()) baseline_ = new std::string(*program);
    setup_ = new absl::Status(!bin_dir.ok() ? bin_dir.status() : program.status());
  }

  static void TearDownTestSuite() {
    if (bin_dir_ != nullptr) fs::remove_all(*bin_dir_);
  }

  void SetUp() override {
    if (!support_->available) {
      // Under CI the host is meant to have it: missing support is a failure, not a pass.
      if (RunningUnderCi()) {
        FAIL() << "create-time enforcement unavailable under CI: " << support_->reason;
      }
      GTEST_SKIP() << "create-time enforcement unavailable: " << support_->reason;
    }
    ASSERT_TRUE(setup_->ok()) << "test set-up failed: " << *setup_;
    char work_template[] = "/tmp/cg-work-XXXXXX";
    ASSERT_NE(mkdtemp(work_template), nullptr);
    work_ = work_template;
    ASSERT_EQ(chown(work_.c_str(), kNobody, kNobody), 0);
    ASSERT_EQ(chmod(work_.c_str(), 0755), 0);
  }

  void TearDown() override {
    if (!work_.empty()) fs::remove_all(work_);
  }

  // Host-side helpers for the tree under /work.
  std::string Host(const std::string& relative) const { return work_ + "/" + relative; }
  void MakeFile(const std::string& relative, uid_t owner = kNobody,
                const std::string& content = "") const {
    std::ofstream(Host(relative)) << content;
    ASSERT_EQ(chown(Host(relative).c_str(), owner, owner), 0);
  }
  void MakeDir(const std::string& relative, uid_t owner = kNobody, mode_t mode = 0755) const {
    ASSERT_EQ(mkdir(Host(relative).c_str(), mode), 0);
    ASSERT_EQ(chown(Host(relative).c_str(), owner, owner), 0);
    ASSERT_EQ(chmod(Host(relative).c_str(), mode), 0);
  }
  void MakeSymlink(const std::string& target, const std::string& relative) const {
    ASSERT_EQ(symlink(target.c_str(), Host(relative).c_str()), 0);
    ASSERT_EQ(lchown(Host(relative).c_str(), kNobody, kNobody), 0);
  }
  bool Exists(const std::string& relative) const {
    struct stat st;
    return lstat(Host(relative).c_str(), &st) == 0;
  }
  struct stat Stat(const std::string& relative) const {
    struct stat st {};
    EXPECT_EQ(lstat(Host(relative).c_str(), &st), 0) << relative;
    return st;
  }
  std::string Content(const std::string& relative) const {
    std::ifstream in(Host(relative));
    std::stringstream out;
    out << in.rdbuf();
    return out.str();
  }
  // Names in /work (any depth) that match the standard patterns.
  std::vector<std::string> MatchingNames() const {
    auto patterns = *policy::FilenamePatterns::Create(policy::StandardFilenameDenyPatterns());
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(work_)) {
      if (patterns.Match(entry.path().filename().string())) found.push_back(entry.path());
    }
    return found;
  }

  // The test helper under the guard, one op per argument; or, with
  // `raw_command`, `ops` is the command itself.
  GuardedRun Run(const std::vector<std::string>& ops, GuardedRunOptions options = {},
                 bool raw_command = false) {
    std::vector<std::string> command;
    if (!raw_command) command.push_back(kSandboxHelper);
    command.insert(command.end(), ops.begin(), ops.end());
    GuardedRun run = GuardedSandbox(*bin_dir_, work_, *baseline_).Run(command, options);
    return run;
  }

  static CreateGuardSupport* support_;
  static absl::Status* setup_;
  static std::string* bin_dir_;
  static std::string* baseline_;
  std::string work_;
};

CreateGuardSupport* CreateGuardTest::support_ = nullptr;
absl::Status* CreateGuardTest::setup_ = nullptr;
std::string* CreateGuardTest::bin_dir_ = nullptr;
std::string* CreateGuardTest::baseline_ = nullptr;

std::vector<std::string> Targets(const GuardedRun& result) {
  std::vector<std::string> targets;
  for (const CreateViolation& v : result.violations) {
    EXPECT_EQ(v.action, "file-write-create");
    targets.push_back(v.target);
  }
  return targets;
}

TEST_F(CreateGuardTest, AllowedOpenCreatesAsTheTraceeWithItsUmask) {
  GuardedRun r = Run({"umask 027", "open /work/ok.txt", "umask 077", "mkdir /work/okdir",
                      "cloexec /work/c.txt", "write /work/w.txt hello"});
  EXPECT_THAT(r.lines, ElementsAre("OK", "OK", "OK", "OK", "OK cloexec", "OK")) << r.stderr_text;
  const struct stat file = Stat("ok.txt");
  EXPECT_TRUE(S_ISREG(file.st_mode));
  EXPECT_EQ(file.st_uid, kNobody);
  EXPECT_EQ(file.st_gid, kNobody);
  EXPECT_EQ(file.st_mode & 07777, 0640u);  // 0666 & ~027
  const struct stat dir = Stat("okdir");
  EXPECT_TRUE(S_ISDIR(dir.st_mode));
  EXPECT_EQ(dir.st_uid, kNobody);
  EXPECT_EQ(dir.st_mode & 07777, 0700u);  // 0777 & ~077
  EXPECT_EQ(Content("w.txt"),
            "hello");  // the injected fd is the created file, writable
  EXPECT_THAT(r.violations, IsEmpty());
  EXPECT_TRUE(r.failures.empty());
  EXPECT_EQ(r.stats.performed, 4u);
}

TEST_F(CreateGuardTest, DeniedNamesFailWithEaccesAndReportHostPaths) {
  MakeDir("sub");
  GuardedRun r = Run({"open /work/.env", "open /work/.env.local", "creat /work/server.key",
                      "openat /work/sub cert.pem", "open sub/../rel.PEM", "open-excl /work/x.pem",
                      "open /work/ok.txt"});
  EXPECT_THAT(r.lines, ElementsAre("ERR EACCES", "ERR EACCES", "ERR EACCES", "ERR EACCES",
                                   "ERR EACCES", "ERR EACCES", "OK"))
      << r.stderr_text;
  EXPECT_THAT(Targets(r), ElementsAre(Host(".env"), Host(".env.local"), Host("server.key"),
                                      Host("sub/cert.pem"), Host("rel.PEM"), Host("x.pem")));
  EXPECT_EQ(r.violations[2].syscall, "creat");
  EXPECT_EQ(r.violations[3].syscall, "openat");
  EXPECT_EQ(r.violations[3].pattern, "*.pem");
  EXPECT_THAT(MatchingNames(), IsEmpty());
  EXPECT_TRUE(Exists("ok.txt"));
  EXPECT_EQ(r.stats.refused, 6u);
}

TEST_F(CreateGuardTest, ExistingNamesOpenAsBefore) {
  MakeFile("existing.txt", kNobody, "old");
  GuardedRun r =
      Run({"write /work/existing.txt new", "open-excl /work/existing.txt", "open /dev/null",
           "reopen-pipe", "reopen-pipe /dev/fd/", "open-path /work/nothing.pem",
           "open /work/missing/x.txt", "open /work/existing.txt/x", "open /work/newdir/"});
  EXPECT_THAT(r.lines, ElementsAre("OK", "ERR EEXIST", "OK", "OK", "OK", "ERR ENOENT", "ERR ENOENT",
                                   "ERR ENOTDIR", "ERR EISDIR"))
      << r.stderr_text;
  EXPECT_EQ(Content("existing.txt"), "new");
  EXPECT_THAT(r.violations, IsEmpty());
}

TEST_F(CreateGuardTest, NoPermissionTheTraceeLacks) {
  MakeDir("rootdir", 0, 0755);  // root's: uid 65534 cannot write here
  MakeDir("locked", kNobody, 0500);
  GuardedRun r = Run({"open /work/rootdir/ok.txt", "mkdir /work/rootdir/d", "mkfifo /work/locked/f",
                      "mknod-chr /work/null", "symlink x /work/rootdir/l"});
  EXPECT_THAT(r.lines,
              ElementsAre("ERR EACCES", "ERR EACCES", "ERR EACCES", "ERR EPERM", "ERR EACCES"))
      << r.stderr_text;
  EXPECT_FALSE(Exists("rootdir/ok.txt"));
  EXPECT_FALSE(Exists("rootdir/d"));
  EXPECT_FALSE(Exists("locked/f"));
  EXPECT_FALSE(Exists("null"));
  EXPECT_THAT(r.violations, IsEmpty());  // the kernel's refusals, not ours
}

TEST_F(CreateGuardTest, DanglingSymlinkCreatesItsTargetSoTheTargetIsChecked) {
  MakeSymlink("evil.pem", "link");
  MakeSymlink("/work/abs.key", "abslink");
  MakeSymlink("fine.txt", "link2");
  MakeSymlink("chain", "chain0");
  MakeSymlink("deep/../evil2.pem", "chain");
  MakeDir("deep");
  GuardedRun r = Run({"open /work/link", "open /work/abslink", "open /work/link2",
                      "open /work/chain0", "open-nofollow /work/link", "open-excl /work/link2"});
  EXPECT_THAT(r.lines, ElementsAre("ERR EACCES", "ERR EACCES", "OK", "ERR EACCES", "ERR ELOOP",
                                   "ERR EEXIST"))
      << r.stderr_text;
  EXPECT_THAT(Targets(r), ElementsAre(Host("evil.pem"), Host("abs.key"), Host("evil2.pem")));
  EXPECT_TRUE(S_ISREG(Stat("fine.txt").st_mode));
  EXPECT_TRUE(S_ISLNK(Stat("link2").st_mode));
  EXPECT_THAT(MatchingNames(), IsEmpty());
}

TEST_F(CreateGuardTest, TmpfileLinkatIsCheckedAtTheLink) {
  GuardedRun r = Run({"tmpfile-proc /work /work/t.key", "tmpfile-proc /work /work/t.txt",
                      "tmpfile-empty /work /work/u.pem", "tmpfile-empty /work /work/u.txt"});
  EXPECT_THAT(r.lines, ElementsAre("ERR EACCES", "OK", "ERR EACCES", "OK")) << r.stderr_text;
  EXPECT_TRUE(S_ISREG(Stat("t.txt").st_mode));
  EXPECT_EQ(Stat("t.txt").st_uid, kNobody);
  EXPECT_TRUE(S_ISREG(Stat("u.txt").st_mode));
  EXPECT_THAT(Targets(r), ElementsAre(Host("t.key"), Host("u.pem")));
  EXPECT_THAT(MatchingNames(), IsEmpty());
}

TEST_F(CreateGuardTest, RenameLinkSymlinkMknodMkdir) {
  MakeFile("r.txt", kNobody, "r");
  MakeFile("src.txt", kNobody, "s");
  MakeFile("a.txt", kNobody, "a");
  MakeFile("b.txt", kNobody, "b");
  MakeFile("e.pem", kNobody, "e");  // existed before the run
  GuardedRun r = Run({
      "rename /work/r.txt /work/r.pem",     // refused
      "rename /work/r.txt /work/r2.txt",    // allowed
      "noreplace /work/a.txt /work/b.txt",  // RENAME_NOREPLACE honoured
      "exchange /work/a.txt /work/b.txt",   // allowed
      "exchange /work/a.txt /work/e.pem",   // both names count
      "link /work/src.txt /work/hard.key",  // refused
      "link /work/src.txt /work/hard.txt",  // allowed
      "symlink anything /work/l.pem",       // the link's name counts
      "symlink x.pem /work/okl",            // its target does not
      "mkfifo /work/p.pem",                 // refused
      "mkfifo /work/p.fifo",                // allowed
      "mknod-reg /work/m.key",              // refused
      "mkdir /work/keys.pem",               // a directory name matches too
      "mkdir /work/e.pem",                  // exists: EEXIST, nothing reported
  });
  EXPECT_THAT(r.lines, ElementsAre("ERR EACCES", "OK", "ERR EEXIST", "OK", "ERR EACCES",
                                   "ERR EACCES", "OK", "ERR EACCES", "OK", "ERR EACCES", "OK",
                                   "ERR EACCES", "ERR EACCES", "ERR EEXIST"))
      << r.stderr_text;
  EXPECT_EQ(Content("r2.txt"), "r");
  EXPECT_EQ(Content("a.txt"), "b");
  EXPECT_EQ(Content("b.txt"), "a");
  EXPECT_EQ(Stat("hard.txt").st_nlink, 2u);
  EXPECT_TRUE(S_ISLNK(Stat("okl").st_mode));
  EXPECT_EQ(Stat("okl").st_uid, kNobody);
  EXPECT_TRUE(S_ISFIFO(Stat("p.fifo").st_mode));
  EXPECT_THAT(Targets(r), ElementsAre(Host("r.pem"), Host("e.pem"), Host("hard.key"), Host("l.pem"),
                                      Host("p.pem"), Host("m.key"), Host("keys.pem")));
  EXPECT_THAT(MatchingNames(),
              ElementsAre(Host("e.pem")));  // only the one that existed
  EXPECT_EQ(Content("e.pem"), "e");
}

TEST_F(CreateGuardTest, RoutesAroundTheFilterAreClosed) {
  GuardedRun r = Run({"openat2 /work/o2.txt", "io_uring", "bind /work/s.pem", "bind /tmp/s.pem"});
  // openat2: ENOSYS; io_uring: EPERM; an AF_UNIX bind in a writable bind:
  // Landlock.
  EXPECT_THAT(r.lines, ElementsAre("ERR ENOSYS", "ERR EPERM", "ERR EACCES", "OK")) << r.stderr_text;
  EXPECT_FALSE(Exists("o2.txt"));
  EXPECT_FALSE(Exists("s.pem"));
}

// The supervisor's set-id violations: action, syscall and target, in order.
std::vector<std::string> SetIdReports(const GuardedRun& result) {
  std::vector<std::string> reports;
  for (const CreateViolation& v : result.violations) {
    reports.push_back(absl::StrCat(v.action, " ", v.syscall, " ", v.target));
  }
  return reports;
}

TEST_F(CreateGuardTest, SetIdModesAreRefusedEvenWithoutTheBaseline) {
  // Here a baseline that allows everything leaves every set-id mode to the supervisor.
  const sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  const GuardedSandbox sandbox(*bin_dir_, work_,
                               std::string(reinterpret_cast<const char*>(&allow), sizeof(allow)));
  const std::vector<std::string> ops = {kSandboxHelper,
                                        "umask 022",
                                        "open-mode /work/u 4755",
                                        "open-mode /work/g 2755",
                                        "mknod-mode /work/m 6755",
                                        "open-mode /tmp/t 4755",
                                        "mkdir-mode /work/d 6755",
                                        "open-mode /work/plain 0755"};
  GuardedRun r = sandbox.Run(ops);
  EXPECT_THAT(r.lines,
              ElementsAre("OK", "ERR EPERM", "ERR EPERM", "ERR EPERM", "ERR EPERM", "OK", "OK"))
      << r.stderr_text;
  EXPECT_FALSE(Exists("u"));
  EXPECT_FALSE(Exists("g"));
  EXPECT_FALSE(Exists("m"));
  EXPECT_EQ(Stat("d").st_mode & 07777, 0755u);
  EXPECT_EQ(Stat("plain").st_mode & 07777, 0755u);
  EXPECT_THAT(
      SetIdReports(r),
      ElementsAre("file-write-setid openat " + Host("u"), "file-write-setid openat " + Host("g"),
                  "file-write-setid mknodat " + Host("m"), "file-write-setid openat /tmp/t"));
  EXPECT_TRUE(r.failures.empty());

  // The same sandbox without the guard does make them: the refusals above
  // were the supervisor's.
  ASSERT_EQ(mkdir(Host("unguarded").c_str(), 0777), 0);
  ASSERT_EQ(chown(Host("unguarded").c_str(), kNobody, kNobody), 0);
  GuardedRun control = sandbox.Run({kSandboxHelper, "umask 022", "open-mode /work/unguarded/u 4755",
                                    "mknod-mode /work/unguarded/m 2755"},
                                   {.guard = false});
  EXPECT_THAT(control.lines, ElementsAre("OK", "OK", "OK")) << control.stderr_text;
  EXPECT_EQ(Stat("unguarded/u").st_mode & 07777, 04755u);
  EXPECT_EQ(Stat("unguarded/m").st_mode & 07777, 02755u);
}

// Under a guarded run's real baseline (SetIdRule::kNotify) every set-id route reaches the
// supervisor: EPERM, one violation each, nothing set-id on disk. Without the guard's filter the
// same baseline fails them closed (ENOSYS: no listener).
TEST_F(CreateGuardTest, AGuardedRunsSetIdModesAreRefusedAndReported) {
  absl::StatusOr<std::string> guarded = SeccompBaselineProgram(SetIdRule::kNotify);
  ASSERT_TRUE(guarded.ok()) << guarded.status();
  const GuardedSandbox sandbox(*bin_dir_, work_, *guarded);
  MakeFile("x");
  ASSERT_EQ(chmod(Host("x").c_str(), 0755), 0);
  MakeDir("d");
  const std::vector<std::string> set_id = {"chmod-mode /work/x 4755",    "fchmod-mode /work/x 6755",
                                           "fchmodat-mode /work/d 2775", "chmod-mode /tmp 1777",
                                           "open-mode /work/u 4755",     "tmpfile-mode /work 2600",
                                           "mknod-mode /tmp/m 4644",     "chmod-mode /work/x 0700"};
  std::vector<std::string> command = {kSandboxHelper};
  command.insert(command.end(), set_id.begin(), set_id.end());
  GuardedRun r = sandbox.Run(command);
  EXPECT_THAT(r.lines, ElementsAre("ERR EPERM", "ERR EPERM", "ERR EPERM", "OK", "ERR EPERM",
                                   "ERR EPERM", "ERR EPERM", "OK"))
      << r.stderr_text;
  EXPECT_THAT(
      SetIdReports(r),
      ElementsAre("file-write-setid chmod " + Host("x"), "file-write-setid fchmod " + Host("x"),
                  "file-write-setid fchmodat " + Host("d"), "file-write-setid openat " + Host("u"),
                  "file-write-setid openat " + work_, "file-write-setid mknodat /tmp/m"));
  EXPECT_EQ(Stat("x").st_mode & 07777, 0700u);  // the plain chmod after them went through
  EXPECT_EQ(Stat("d").st_mode & 07777, 0755u);
  EXPECT_FALSE(Exists("u"));
  EXPECT_TRUE(r.failures.empty());

  GuardedRun unguarded = sandbox.Run(command, {.guard = false});
  EXPECT_THAT(unguarded.lines, ElementsAre("ERR ENOSYS", "ERR ENOSYS", "ERR ENOSYS", "OK",
                                           "ERR ENOSYS", "ERR ENOSYS", "ERR ENOSYS", "OK"))
      << unguarded.stderr_text;
  EXPECT_EQ(Stat("x").st_mode & 07777, 0700u);
  EXPECT_FALSE(Exists("u"));
}

TEST_F(CreateGuardTest, ProcessesOutsideTheLayersAreOutOfReach) {
  // bwrap's PID 1 and the shim's bridge run without Landlock and the filter:
  // Landlock's ptrace scoping keeps the command out of their memory.
  GuardedRun r = Run({"open-mem 1", "open-mem parent", "open-mem self"});
  EXPECT_THAT(r.lines, ElementsAre("ERR EACCES", "ERR EACCES", "OK")) << r.stderr_text;
}

TEST_F(CreateGuardTest, AnythingGoesInTheSandboxesOwnTmp) {
  GuardedRun r = Run({"open /tmp/x.pem", "mkdir /tmp/d.key", "mkfifo /tmp/f.pem",
                      "symlink a /tmp/l.pem", "rename /tmp/x.pem /tmp/d.key/y.pem",
                      "link /tmp/d.key/y.pem /tmp/z.key", "tmpfile-proc /tmp /tmp/t.env",
                      "chdir /tmp", "open .env", "rename /tmp/d.key/y.pem /work/y.txt"});
  EXPECT_THAT(r.lines,
              ElementsAre("OK", "OK", "OK", "OK", "OK", "OK", "OK", "OK", "OK", "ERR EXDEV"))
      << r.stderr_text;
  EXPECT_THAT(r.violations, IsEmpty());
  EXPECT_EQ(r.stats.performed, 0u);  // all left to the kernel, under Landlock
  EXPECT_FALSE(Exists("y.txt"));
}

TEST_F(CreateGuardTest, GitInitAddCommitWorks) {
  GuardedRun r = Run({"/usr/bin/sh", "-c",
                      "export HOME=/tmp GIT_CONFIG_NOSYSTEM=1; git init -q repo && cd repo && "
                      "mkdir -p src/deep && echo hi > src/deep/a.txt && git add -A && "
                      "git -c user.name=t -c user.email=t@example.com commit -qm first && "
                      "git log --oneline | wc -l; echo SECRET=1 > .env; echo \"env: $?\"; "
                      "git checkout -qb topic && git status --short"},
                     {}, /*raw_command=*/true);
  EXPECT_THAT(r.lines, ElementsAre("1", "env: 2")) << r.stderr_text;
  EXPECT_THAT(r.stderr_text, HasSubstr(".env: Permission denied"));
  EXPECT_TRUE(S_ISREG(Stat("repo/.git/refs/heads/topic").st_mode));
  EXPECT_EQ(Stat("repo/src/deep/a.txt").st_uid, kNobody);
  EXPECT_THAT(Targets(r), ElementsAre(Host("repo/.env")));
}

// cp x; ./x — a file the guard created for the command runs at once: the supervisor's own
// copy of the new fd is closed before the command resumes (an open writable copy made the exec
// fail with ETXTBSY whenever the supervisor thread was preempted; seen under load in CI).
TEST_F(CreateGuardTest, AFileCreatedThroughTheGuardCanBeExecutedAtOnce) {
  GuardedRun r = Run({"/bin/sh", "-c",
                      "for i in $(seq 300); do cp /bin/true /work/x$i && /work/x$i || exit 1;"
                      " done; echo ran"},
                     {}, /*raw_command=*/true);
  EXPECT_EQ(WEXITSTATUS(r.wait_status), 0) << r.stderr_text;
  EXPECT_THAT(r.lines, ElementsAre("ran")) << r.stderr_text;
}

TEST_F(CreateGuardTest, NodeWritesManySmallFiles) {
  // npm-style: many directories and small files, written with fs.writeFileSync.
  GuardedRun r = Run({"/usr/bin/node", "-e",
                      "const fs = require('fs');"
                      "for (let p = 0; p < 40; p++) {"
                      "  const d = `/work/node_modules/pkg${p}/lib`;"
                      "  fs.mkdirSync(d, {recursive: true});"
                      "  for (let f = 0; f < 25; f++) fs.writeFileSync(`${d}/f${f}.js`, 'x');"
                      "  fs.writeFileSync(`/work/node_modules/pkg${p}/package.json`, '{}');"
                      "}"
                      "try { fs.writeFileSync('/work/node_modules/pkg0/server.key', 'k'); }"
                      "catch (e) { console.log(e.code); }"
                      "console.log(fs.readdirSync('/work/node_modules').length);"},
                     {}, /*raw_command=*/true);
  EXPECT_THAT(r.lines, ElementsAre("EACCES", "40")) << r.stderr_text;
  EXPECT_TRUE(S_ISREG(Stat("node_modules/pkg39/lib/f24.js").st_mode));
  EXPECT_THAT(Targets(r), ElementsAre(Host("node_modules/pkg0/server.key")));
  EXPECT_THAT(MatchingNames(), IsEmpty());
}

TEST_F(CreateGuardTest, UntarOf5000FilesRefusesOnlyTheEnv) {
  const std::string src = Host("src");
  for (int d = 0; d < 50; ++d) {
    fs::create_directories(absl::StrCat(src, "/tree/d", d));
    for (int f = 0; f < 100; ++f) {
      std::ofstream(absl::StrCat(src, "/tree/d", d, "/f", f, ".txt")) << f;
    }
  }
  std::ofstream(src + "/tree/d7/.env") << "SECRET=1\n";
  ASSERT_EQ(
      system(
          absl::StrCat("tar -cf ", Host("files.tar"), " -C ", src, " tree && rm -r ", src).c_str()),
      0);
  MakeDir("out");
  GuardedRun r =
      Run({"/usr/bin/tar", "-xf", "/work/files.tar", "-C", "/work/out"}, {}, /*raw_command=*/true);
  EXPECT_EQ(WEXITSTATUS(r.wait_status), 2) << r.stderr_text;  // tar reports the one failure
  EXPECT_THAT(r.stderr_text, HasSubstr(".env: Cannot open: Permission denied"));
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(Host("out"))) {
    files += entry.is_regular_file() ? 1 : 0;
  }
  EXPECT_EQ(files, 5000u);
  EXPECT_FALSE(Exists("out/tree/d7/.env"));
  EXPECT_THAT(Targets(r), ElementsAre(Host("out/tree/d7/.env")));
}

TEST_F(CreateGuardTest, BufferFlipRaceHasNoBypass) {
  constexpr int kAttempts = 100000;
  GuardedRun r = Run({absl::StrCat("race /work ", kAttempts)});
  ASSERT_EQ(r.lines.size(), 1u) << r.stderr_text;
  std::cout << "buffer race: " << r.lines[0] << "\n";
  // "OK EACCES=N created=M": every attempt either created ok.txt or was
  // refused.
  long created = 0, refused = 0;
  for (absl::string_view part : absl::StrSplit(r.lines[0], ' ')) {
    if (absl::ConsumePrefix(&part, "created=")) {
      ASSERT_TRUE(absl::SimpleAtoi(part, &created));
    }
    if (absl::ConsumePrefix(&part, "EACCES=")) {
      ASSERT_TRUE(absl::SimpleAtoi(part, &refused));
    }
  }
  EXPECT_EQ(created + refused, kAttempts) << r.lines[0];
  EXPECT_GT(created, 0);
  EXPECT_GT(refused, 0);
  EXPECT_THAT(MatchingNames(), IsEmpty());
  EXPECT_EQ(static_cast<long>(r.violations.size()), refused);
}

TEST_F(CreateGuardTest, SymlinkSwapRaceHasNoBypass) {
  GuardedRun r = Run({"symrace /work 20000"});
  ASSERT_EQ(r.lines.size(), 1u) << r.stderr_text;
  std::cout << "symlink race: " << r.lines[0] << "\n";
  EXPECT_THAT(r.lines[0], HasSubstr("created="));
  EXPECT_THAT(MatchingNames(), IsEmpty());
}

TEST_F(CreateGuardTest, StoppedSupervisorFailsTrappedCallsClosed) {
  GuardedRunOptions options;
  options.during = [](SandboxProcess& process, CreateSupervisor* supervisor) {
    // It holds the notify fd once it has handled the first call.
    ASSERT_TRUE(supervisor->AwaitTrapped(1, absl::Seconds(60)))
        << "the supervisor handled no call within 60 s";
    supervisor->Join();  // stopped, its thread ended, the notify fd closed
    EXPECT_FALSE(supervisor->running());
    ASSERT_EQ(write(process.stdin_fd(), "go\n", 3), 3);
  };
  GuardedRun r = Run(
      {"open /work/early.txt", "wait", "open /work/late.txt", "mkdir /work/late", "open /tmp/fine"},
      options);
  EXPECT_THAT(r.lines, ElementsAre("OK", "OK", "ERR ENOSYS", "ERR ENOSYS", "ERR ENOSYS"))
      << r.stderr_text;
  EXPECT_TRUE(Exists("early.txt"));
  EXPECT_FALSE(Exists("late.txt"));
  EXPECT_FALSE(Exists("late"));
  EXPECT_TRUE(r.failures.empty());  // a stop is not a failure
}

TEST_F(CreateGuardTest, PendingCallFailsWhenTheNotifyFdCloses) {
  GuardedRunOptions options;
  options.without_supervisor = [](SandboxProcess&, UniqueFd channel) {
    absl::StatusOr<UniqueFd> fd = ReceiveNotifyFd(channel.get());
    ASSERT_TRUE(fd.ok()) << fd.status();
    absl::StatusOr<SeccompNotify> notify = SeccompNotify::Create(std::move(*fd));
    ASSERT_TRUE(notify.ok()) << notify.status();
    pollfd p{notify->fd(), POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 10000), 1);  // the call waits for us
    absl::StatusOr<seccomp_notif> call = notify->Receive();
    ASSERT_TRUE(call.ok()) << call.status();
    // Received and never answered: the supervisor "dies" here (the fd closes).
  };
  GuardedRun r = Run({"open /work/pending.txt", "open /work/after.txt"}, options);
  EXPECT_THAT(r.lines, ElementsAre("ERR ENOSYS", "ERR ENOSYS")) << r.stderr_text;
  EXPECT_FALSE(Exists("pending.txt"));
  EXPECT_FALSE(Exists("after.txt"));
}

TEST_F(CreateGuardTest, ShimRefusesAnUnsafeFreeDirAndTheCommandNeverRuns) {
  GuardedRunOptions options;
  options.shim_args = {"--create-guard={fd}", "--free-create=/tmp", "--writable=/tmp"};
  GuardedRun r = Run({"open /work/x.pem"}, options);
  EXPECT_THAT(r.lines, IsEmpty());
  EXPECT_TRUE(WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 126)
      << r.wait_status << ": " << r.stderr_text;
  EXPECT_THAT(r.stderr_text, HasSubstr("overlaps the writable mount /tmp"));
  // Not the supervisor's death: the sandbox never started, and the run says so.
  EXPECT_THAT(r.failures, IsEmpty());
  EXPECT_TRUE(r.never_started);
  EXPECT_FALSE(Exists("x.pem"));
}

TEST(CreateGuardProbe, ReportsWhatItFound) {
  CreateGuardSupport support = ProbeCreateGuard();
  std::cout << "probe: " << support.reason << "\n";
  EXPECT_FALSE(support.reason.empty());
  if (support.available) {
    EXPECT_GE(support.landlock_abi, 1);
  } else {
    EXPECT_FALSE(RunningUnderCi()) << "under CI the host must support it: " << support.reason;
  }
}

}  // namespace
}  // namespace ccsandbox::launcher
