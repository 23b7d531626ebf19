// The emulator on a real temporary directory, driven through HandleNextCall with the two
// kernel interfaces faked: the notification source (FakeListener: queued calls, recorded
// answers, ids that stop being valid on cue) and the tracee (FakeTracee: its memory is a map
// of addresses to strings, its fds are paths, its root is ours). Creation itself is real.
// The real kernel path (bwrap, the shim, seccomp, Landlock) is create_guard_test's.
#include "launcher/create_guard/emulator.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "launcher/create_guard/decision.h"
#include "launcher/create_guard/handle_call.h"
#include "launcher/create_guard/seccomp_listener.h"
#include "launcher/create_guard/tracee_access.h"

namespace ccsandbox::launcher {
namespace {

namespace fs = std::filesystem;

constexpr pid_t kTid = 4242;

// How a call was answered.
struct Answer {
  enum class Kind { kErrno, kValue, kContinue, kFd } kind;
  uint64_t id = 0;
  int error = 0;
  int64_t value = 0;
  UniqueFd fd;  // kFd: a dup of what would have been installed in the caller
  bool close_on_exec = false;
};

class FakeListener : public SeccompListener {
 public:
  void Push(const seccomp_notif& call) { queue_.push_back(call); }
  void Invalidate(uint64_t id) { invalid_.push_back(id); }

  int fd() const override { return -1; }
  absl::StatusOr<seccomp_notif> Receive() override {
    if (queue_.empty()) return absl::FailedPreconditionError("nothing queued");
    seccomp_notif call = queue_.front();
    queue_.pop_front();
    return call;
  }
  absl::Status IdValid(uint64_t id) override {
    for (uint64_t gone : invalid_) {
      if (gone == id) return absl::NotFoundError("stopped waiting");
    }
    return absl::OkStatus();
  }
  absl::Status RespondErrno(uint64_t id, int error) override {
    return Record({Answer::Kind::kErrno, id, error});
  }
  absl::Status RespondValue(uint64_t id, int64_t value) override {
    return Record({Answer::Kind::kValue, id, 0, value});
  }
  absl::Status RespondContinue(uint64_t id) override {
    return Record({Answer::Kind::kContinue, id});
  }
  absl::Status RespondFd(uint64_t id, UniqueFd fd, bool close_on_exec) override {
    return Record({Answer::Kind::kFd, id, 0, 0, std::move(fd), close_on_exec});
  }

  std::vector<Answer> answers;

 private:
  // Every answer is recorded; one to a call that stopped waiting fails as the kernel's would.
  absl::Status Record(Answer answer) {
    const uint64_t id = answer.id;
    answers.push_back(std::move(answer));
    return IdValid(id);
  }

  std::deque<seccomp_notif> queue_;
  std::vector<uint64_t> invalid_;
};

class FakeTracee : public TraceeAccess {
 public:
  FakeTracee() : proc_(open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC)) {
    identity.fsuid = geteuid();
    identity.fsgid = getegid();
    identity.umask = 022;
    identity.ns_tgid = identity.ns_tid = 2;
  }

  // Puts `text` in the tracee's memory; returns its address.
  uint64_t Put(const std::string& text) {
    const uint64_t address = 0x10000 + 0x1000 * memory.size();
    memory[address] = text;
    return address;
  }

  absl::StatusOr<TraceeIdentity> Identity(pid_t) override {
    if (!identity_error.ok()) return identity_error;
    return identity;
  }
  absl::StatusOr<std::string> ReadString(pid_t, uint64_t address) override {
    if (on_read) on_read(address);
    if (gone) return absl::NotFoundError("the tracee is gone");
    auto it = memory.find(address);
    if (it == memory.end()) return absl::InvalidArgumentError("read a path: Bad address");
    return it->second;
  }
  absl::StatusOr<UniqueFd> OpenFd(pid_t, int fd) override {
    const std::string path = fd == AT_FDCWD ? cwd : fds.count(fd) ? fds[fd] : "";
    if (path.empty()) return absl::InvalidArgumentError("open its fd: Bad file descriptor");
    UniqueFd opened(open(path.c_str(), O_PATH | O_CLOEXEC));
    if (!opened.valid()) return absl::InvalidArgumentError(absl::StrCat("open ", path));
    return opened;
  }
  absl::Status EnterRoot(pid_t) override {
    ++entered;
    return absl::OkStatus();
  }
  bool IsFree(int dir) override {
    std::error_code error;
    const fs::path path = fs::read_symlink(absl::StrCat("/proc/self/fd/", dir), error);
    for (const std::string& free : free_dirs) {
      if (path == free || absl::StartsWith(path.string(), free + "/")) return true;
    }
    return false;
  }
  absl::Status BecomeTracee(const TraceeIdentity& id) override {
    EXPECT_FALSE(as_tracee);
    as_tracee = true;
    saved_umask_ = umask(id.umask);
    return absl::OkStatus();
  }
  absl::Status BecomeSelf() override {
    if (as_tracee) umask(saved_umask_);
    as_tracee = false;
    return absl::OkStatus();
  }
  int self_proc() const override { return proc_.get(); }

  TraceeIdentity identity;
  absl::Status identity_error;
  std::map<uint64_t, std::string> memory;
  std::map<int, std::string> fds;  // the tracee's fd number -> a path that opens it
  std::string cwd;
  std::vector<std::string> free_dirs;
  bool gone = false;
  std::function<void(uint64_t)> on_read;
  int entered = 0;
  bool as_tracee = false;

 private:
  UniqueFd proc_;
  mode_t saved_umask_ = 022;
};

class EmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string dir_template = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/emu-XXXXXX");
    ASSERT_NE(mkdtemp(dir_template.data()), nullptr);
    root_ = fs::canonical(dir_template).string();
    work_ = root_ + "/work";
    free_ = root_ + "/free";
    fs::create_directories(work_);
    fs::create_directories(free_);
    tracee_.cwd = work_;
    tracee_.free_dirs = {free_};
    absl::StatusOr<CreateRules> rules =
        CreateRules::Create({".env", "*.pem", "*.key"}, {".bashrc"}, {},
                            {{work_, "/host/work", /*writable=*/true, false}});
    ASSERT_TRUE(rules.ok()) << rules.status();
    emulator_.emplace(tracee_, std::move(*rules));
  }
  void TearDown() override { fs::remove_all(root_); }

  // Queues one call: `nr` with these arguments (addresses from tracee_.Put).
  uint64_t Trap(int nr, std::vector<uint64_t> args) {
    seccomp_notif call{};
    call.id = ++next_id_;
    call.pid = kTid;
    call.data.nr = nr;
    call.data.arch = AUDIT_ARCH_X86_64;
    for (size_t i = 0; i < args.size(); ++i) call.data.args[i] = args[i];
    listener_.Push(call);
    return call.id;
  }
  uint64_t Path(const std::string& path) { return tracee_.Put(path); }
  static uint64_t Fd(int fd) { return static_cast<uint64_t>(static_cast<uint32_t>(fd)); }

  absl::StatusOr<CallOutcome> Handle() {
    absl::StatusOr<CallOutcome> outcome =
        HandleNextCall(listener_, *emulator_, [&](const CreateViolation& v) {
          answers_at_report_.push_back(listener_.answers.size());
          violations_.push_back(v);
        });
    EXPECT_FALSE(tracee_.as_tracee) << "BecomeSelf after every call";
    return outcome;
  }
  // Handles one call that must succeed; returns its answer (nullptr when unanswered).
  const Answer* HandleOk(CallOutcome expected) {
    const size_t before = listener_.answers.size();
    absl::StatusOr<CallOutcome> outcome = Handle();
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    if (outcome.ok()) {
      EXPECT_EQ(static_cast<int>(*outcome), static_cast<int>(expected));
    }
    return listener_.answers.size() > before ? &listener_.answers.back() : nullptr;
  }

  bool Exists(const std::string& path) const {
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
  }
  mode_t Mode(const std::string& path) const {
    struct stat st {};
    EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
    return st.st_mode;
  }

  std::string root_, work_, free_;
  FakeTracee tracee_;
  FakeListener listener_;
  std::optional<CreateEmulator> emulator_;
  std::vector<CreateViolation> violations_;
  std::vector<size_t> answers_at_report_;
  uint64_t next_id_ = 0;
};

TEST_F(EmulatorTest, AllowedOpenIsPerformedWithItsModeAndFlagsAndTheFdHandedBack) {
  tracee_.identity.umask = 027;
  const uint64_t id = Trap(
      SYS_openat, {Fd(AT_FDCWD), Path("ok.txt"), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0666});
  const Answer* answer = HandleOk(CallOutcome::kPerformed);
  ASSERT_NE(answer, nullptr);
  EXPECT_EQ(answer->kind, Answer::Kind::kFd);
  EXPECT_EQ(answer->id, id);
  EXPECT_TRUE(answer->close_on_exec);
  ASSERT_TRUE(answer->fd.valid());
  // The fd handed back is the new file, opened as asked.
  struct stat by_fd {
  }, by_name{};
  ASSERT_EQ(fstat(answer->fd.get(), &by_fd), 0);
  ASSERT_EQ(stat((work_ + "/ok.txt").c_str(), &by_name), 0);
  EXPECT_EQ(by_fd.st_ino, by_name.st_ino);
  EXPECT_TRUE(S_ISREG(by_name.st_mode));
  EXPECT_EQ(by_name.st_mode & 07777, 0640u);  // 0666 & ~027
  const int flags = fcntl(answer->fd.get(), F_GETFL);
  EXPECT_EQ(flags & O_ACCMODE, O_WRONLY);
  EXPECT_TRUE(flags & O_APPEND);
  ASSERT_EQ(write(answer->fd.get(), "hi", 2), 2);
  std::ifstream in(work_ + "/ok.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "hi");
  EXPECT_TRUE(violations_.empty());
  EXPECT_EQ(tracee_.entered, 1);
}

TEST_F(EmulatorTest, RelativePathsResolveAgainstTheTraceesDirfdAndCreat) {
  fs::create_directories(work_ + "/sub");
  tracee_.fds[7] = work_ + "/sub";
  Trap(SYS_openat, {Fd(7), Path("rel.txt"), O_CREAT | O_RDWR, 0600});
  const Answer* opened = HandleOk(CallOutcome::kPerformed);
  ASSERT_NE(opened, nullptr);
  EXPECT_FALSE(opened->close_on_exec);
  EXPECT_EQ(fcntl(opened->fd.get(), F_GETFL) & O_ACCMODE, O_RDWR);
  EXPECT_EQ(Mode(work_ + "/sub/rel.txt") & 07777, 0600u);

  Trap(SYS_creat, {Path("c.txt"), 0644});  // relative to the cwd: O_CREAT|O_WRONLY|O_TRUNC
  const Answer* created = HandleOk(CallOutcome::kPerformed);
  ASSERT_NE(created, nullptr);
  EXPECT_EQ(fcntl(created->fd.get(), F_GETFL) & O_ACCMODE, O_WRONLY);
  EXPECT_EQ(Mode(work_ + "/c.txt") & 07777, 0644u);
}

TEST_F(EmulatorTest, AllowedMakesLinksAndRenamesArePerformed) {
  tracee_.identity.umask = 022;
  std::ofstream(work_ + "/r.txt") << "r";
  std::ofstream(work_ + "/src.txt") << "s";
  Trap(SYS_mkdirat, {Fd(AT_FDCWD), Path(work_ + "/d"), 06777});
  Trap(SYS_mknodat, {Fd(AT_FDCWD), Path(work_ + "/p.fifo"), S_IFIFO | 0666, 0});
  Trap(SYS_symlinkat, {Path("x.pem"), Fd(AT_FDCWD), Path(work_ + "/okl")});
  Trap(SYS_linkat,
       {Fd(AT_FDCWD), Path(work_ + "/src.txt"), Fd(AT_FDCWD), Path(work_ + "/hard.txt"), 0});
  Trap(SYS_renameat2, {Fd(AT_FDCWD), Path(work_ + "/r.txt"), Fd(AT_FDCWD), Path(work_ + "/r2.txt"),
                       RENAME_NOREPLACE});
  for (int i = 0; i < 5; ++i) {
    const Answer* answer = HandleOk(CallOutcome::kPerformed);
    ASSERT_NE(answer, nullptr) << i;
    EXPECT_EQ(answer->kind, Answer::Kind::kValue) << i;
    EXPECT_EQ(answer->value, 0) << i;
  }
  EXPECT_TRUE(S_ISDIR(Mode(work_ + "/d")));
  EXPECT_EQ(Mode(work_ + "/d") & 07777, 0755u);  // set-id bits dropped, the umask applied
  EXPECT_TRUE(S_ISFIFO(Mode(work_ + "/p.fifo")));
  EXPECT_EQ(Mode(work_ + "/p.fifo") & 07777, 0644u);
  EXPECT_EQ(fs::read_symlink(work_ + "/okl").string(), "x.pem");  // the target as given
  EXPECT_EQ(fs::hard_link_count(work_ + "/src.txt"), 2u);
  EXPECT_FALSE(Exists(work_ + "/r.txt"));
  EXPECT_TRUE(Exists(work_ + "/r2.txt"));
  EXPECT_TRUE(violations_.empty());
}

TEST_F(EmulatorTest, AnOTmpfileIsLinkedThroughTheTraceesFd) {
  UniqueFd tmp(open(work_.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0640));
  ASSERT_TRUE(tmp.valid());
  ASSERT_EQ(write(tmp.get(), "t", 1), 1);
  tracee_.fds[9] = absl::StrCat("/proc/self/fd/", tmp.get());
  Trap(SYS_linkat, {Fd(9), Path(""), Fd(AT_FDCWD), Path(work_ + "/t.txt"), AT_EMPTY_PATH});
  Trap(SYS_linkat, {Fd(AT_FDCWD), Path("/proc/self/fd/9"), Fd(AT_FDCWD), Path(work_ + "/t.key"),
                    AT_SYMLINK_FOLLOW});
  HandleOk(CallOutcome::kPerformed);
  const Answer* refused = HandleOk(CallOutcome::kRefused);
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->error, EACCES);
  std::ifstream in(work_ + "/t.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "t");
  EXPECT_FALSE(Exists(work_ + "/t.key"));
}

TEST_F(EmulatorTest, DeniedCreatesGetEaccesAndAViolationReportedBeforeTheAnswer) {
  std::ofstream(work_ + "/r.txt") << "r";
  symlink("evil.pem", (work_ + "/link").c_str());
  Trap(SYS_openat, {Fd(AT_FDCWD), Path(work_ + "/.env"), O_CREAT | O_WRONLY, 0644});
  Trap(SYS_open, {Path("link"), O_CREAT | O_WRONLY, 0644});  // a dangling symlink's target
  Trap(SYS_mkdir, {Path(work_ + "/keys.pem"), 0755});
  Trap(SYS_rename, {Path(work_ + "/r.txt"), Path(work_ + "/r.key")});
  Trap(SYS_symlink, {Path("anything"), Path(work_ + "/.bashrc")});
  for (int i = 0; i < 5; ++i) {
    const Answer* answer = HandleOk(CallOutcome::kRefused);
    ASSERT_NE(answer, nullptr) << i;
    EXPECT_EQ(answer->kind, Answer::Kind::kErrno) << i;
    EXPECT_EQ(answer->error, EACCES) << i;
  }
  ASSERT_EQ(violations_.size(), 5u);
  const std::vector<std::vector<std::string>> expected = {
      {"/host/work/.env", ".env", "openat"},
      {"/host/work/evil.pem", "*.pem", "open"},
      {"/host/work/keys.pem", "*.pem", "mkdir"},
      {"/host/work/r.key", "*.key", "rename"},
      {"/host/work/.bashrc", ".bashrc", "symlink"}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(violations_[i].action, "file-write-create");
    EXPECT_EQ(violations_[i].target, expected[i][0]);
    EXPECT_EQ(violations_[i].pattern, expected[i][1]);
    EXPECT_EQ(violations_[i].syscall, expected[i][2]);
    EXPECT_EQ(violations_[i].pid, kTid);
    EXPECT_EQ(answers_at_report_[i], i) << "reported before the call was answered";
  }
  for (const char* name : {".env", "evil.pem", "keys.pem", "r.key", ".bashrc"}) {
    EXPECT_FALSE(Exists(work_ + "/" + name)) << name;
  }
  EXPECT_TRUE(Exists(work_ + "/r.txt"));
}

TEST_F(EmulatorTest, WhatTheKernelDecidesIsLeftToIt) {
  std::ofstream(work_ + "/existing.pem") << "e";
  Trap(SYS_openat, {Fd(AT_FDCWD), Path(free_ + "/x.pem"), O_CREAT | O_WRONLY, 0644});
  Trap(SYS_openat, {Fd(AT_FDCWD), Path(work_ + "/existing.pem"), O_CREAT | O_WRONLY, 0644});
  Trap(SYS_openat, {Fd(AT_FDCWD), Path(work_ + "/missing/x.txt"), O_CREAT | O_WRONLY, 0644});
  for (int i = 0; i < 3; ++i) {
    const Answer* answer = HandleOk(CallOutcome::kContinued);
    ASSERT_NE(answer, nullptr) << i;
    EXPECT_EQ(answer->kind, Answer::Kind::kContinue) << i;
  }
  EXPECT_FALSE(Exists(free_ + "/x.pem"));  // the kernel would create it, not us
  EXPECT_TRUE(violations_.empty());
}

// A set-id mode is refused with EPERM and reported, named as well as it can be: wherever the
// name is, whether it exists, and even when its path cannot be read (never the kernel's).
TEST_F(EmulatorTest, SetIdModesAreRefusedAndReported) {
  std::ofstream(work_ + "/x") << "x";
  ASSERT_EQ(chmod((work_ + "/x").c_str(), 0644), 0);
  tracee_.fds[7] = work_ + "/x";
  Trap(SYS_openat, {Fd(AT_FDCWD), Path(work_ + "/u"), O_CREAT | O_WRONLY, 04755});
  Trap(SYS_openat, {Fd(AT_FDCWD), Path(work_), O_TMPFILE | O_RDWR, 02600});
  Trap(SYS_mknod, {Path(work_ + "/m"), S_IFREG | 02755, 0});
  Trap(SYS_chmod, {Path("x"), 04755});
  Trap(SYS_fchmod, {Fd(7), 06755});
  Trap(SYS_fchmodat, {Fd(AT_FDCWD), Path(free_ + "/t"), 02755});
  Trap(SYS_chmod, {0xdead, 04755});  // unreadable: no name, still refused
  for (int i = 0; i < 7; ++i) {
    const Answer* answer = HandleOk(CallOutcome::kRefused);
    ASSERT_NE(answer, nullptr) << i;
    EXPECT_EQ(answer->kind, Answer::Kind::kErrno) << i;
    EXPECT_EQ(answer->error, EPERM) << i;
  }
  ASSERT_EQ(violations_.size(), 7u);
  const std::vector<std::pair<std::string, std::string>> reported = {{"openat", "/host/work/u"},
                                                                     {"openat", "/host/work"},
                                                                     {"mknod", "/host/work/m"},
                                                                     {"chmod", "/host/work/x"},
                                                                     {"fchmod", "/host/work/x"},
                                                                     {"fchmodat", free_ + "/t"},
                                                                     {"chmod", ""}};
  for (size_t i = 0; i < reported.size(); ++i) {
    EXPECT_EQ(violations_[i].action, kActionFileWriteSetId) << i;
    EXPECT_EQ(violations_[i].syscall, reported[i].first) << i;
    EXPECT_EQ(violations_[i].target, reported[i].second) << i;
  }
  EXPECT_EQ(answers_at_report_, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6}));  // reported first
  EXPECT_FALSE(Exists(work_ + "/u"));
  EXPECT_FALSE(Exists(work_ + "/m"));
  EXPECT_EQ(Mode(work_ + "/x") & 07777, 0644u);
}

TEST_F(EmulatorTest, ExistingMatchesAndPlainModesFailOrPassWithoutAViolation) {
  std::ofstream(work_ + "/e.pem") << "e";
  std::ofstream(work_ + "/x") << "x";
  Trap(SYS_mkdir, {Path(work_ + "/e.pem"), 0755});
  Trap(SYS_chmod, {Path(work_ + "/x"), 0755});  // not trapped by the filter: the kernel's
  const Answer* exists = HandleOk(CallOutcome::kFailed);
  ASSERT_NE(exists, nullptr);
  EXPECT_EQ(exists->error, EEXIST);
  const Answer* plain = HandleOk(CallOutcome::kContinued);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->kind, Answer::Kind::kContinue);
  EXPECT_TRUE(violations_.empty());
}

TEST_F(EmulatorTest, ACallThatStopsWaitingMidwayIsNeitherPerformedNorReported) {
  Trap(SYS_openat, {Fd(AT_FDCWD), Path(work_ + "/first.txt"), O_CREAT | O_WRONLY, 0644});
  HandleOk(CallOutcome::kPerformed);  // the sandbox is entered and confirmed

  // The tracee is killed after we read its path (its tid could name another thread now).
  const uint64_t allowed =
      Trap(SYS_openat, {Fd(AT_FDCWD), Path(work_ + "/late.txt"), O_CREAT | O_WRONLY, 0644});
  const uint64_t denied =
      Trap(SYS_openat, {Fd(AT_FDCWD), Path(work_ + "/late.pem"), O_CREAT | O_WRONLY, 0644});
  const uint64_t made = Trap(SYS_mkdir, {Path(work_ + "/late"), 0755});
  const uint64_t renamed =
      Trap(SYS_rename, {Path(work_ + "/first.txt"), Path(work_ + "/moved.txt")});
  for (uint64_t id : {allowed, denied, made, renamed}) {
    tracee_.on_read = [&, id](uint64_t) { listener_.Invalidate(id); };
    EXPECT_EQ(HandleOk(CallOutcome::kDropped), nullptr) << id;
  }
  EXPECT_EQ(listener_.answers.size(), 1u);  // only the first call's
  EXPECT_FALSE(Exists(work_ + "/late.txt"));
  EXPECT_FALSE(Exists(work_ + "/late.pem"));
  EXPECT_FALSE(Exists(work_ + "/late"));
  EXPECT_TRUE(Exists(work_ + "/first.txt"));
  EXPECT_TRUE(violations_.empty());
}

TEST_F(EmulatorTest, TheFirstCallerVanishingWhileWeEnterStopsTheSupervisor) {
  // The first EnterRoot names the sandbox by a tid: unconfirmed, nothing can be trusted.
  const uint64_t id =
      Trap(SYS_openat, {Fd(AT_FDCWD), Path(work_ + "/x.txt"), O_CREAT | O_WRONLY, 0644});
  listener_.Invalidate(id);
  absl::StatusOr<CallOutcome> outcome = Handle();
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kInternal) << outcome.status();
  EXPECT_TRUE(listener_.answers.empty());
  EXPECT_FALSE(Exists(work_ + "/x.txt"));
}

TEST_F(EmulatorTest, FailedReadsOfTheTraceeFailClosed) {
  // An unreadable path (EFAULT): the kernel answers, and Landlock bounds what it may create;
  // we create nothing.
  Trap(SYS_openat, {Fd(AT_FDCWD), 0xdead0000, O_CREAT | O_WRONLY, 0644});
  const Answer* unreadable = HandleOk(CallOutcome::kContinued);
  ASSERT_NE(unreadable, nullptr);
  EXPECT_EQ(unreadable->kind, Answer::Kind::kContinue);
  // A relative path whose dirfd cannot be opened: the same.
  Trap(SYS_openat, {Fd(5), Path("x.txt"), O_CREAT | O_WRONLY, 0644});
  const Answer* bad_dirfd = HandleOk(CallOutcome::kContinued);
  ASSERT_NE(bad_dirfd, nullptr);
  EXPECT_EQ(bad_dirfd->kind, Answer::Kind::kContinue);
  // A rename whose second path cannot be read: nothing moves.
  std::ofstream(work_ + "/r.txt") << "r";
  Trap(SYS_rename, {Path(work_ + "/r.txt"), 0xdead0000});
  const Answer* half_read = HandleOk(CallOutcome::kContinued);
  ASSERT_NE(half_read, nullptr);
  EXPECT_EQ(half_read->kind, Answer::Kind::kContinue);
  EXPECT_TRUE(Exists(work_ + "/r.txt"));
  // The tracee gone while we read: not answered at all.
  tracee_.gone = true;
  Trap(SYS_openat, {Fd(AT_FDCWD), Path(work_ + "/gone.txt"), O_CREAT | O_WRONLY, 0644});
  EXPECT_EQ(HandleOk(CallOutcome::kDropped), nullptr);
  // Its credentials unreadable: the supervisor stops (every trapped call then fails).
  tracee_.gone = false;
  tracee_.identity_error = absl::InternalError("cannot read /proc/4242/status");
  Trap(SYS_openat, {Fd(AT_FDCWD), Path(work_ + "/late.txt"), O_CREAT | O_WRONLY, 0644});
  EXPECT_FALSE(Handle().ok());
  EXPECT_EQ(listener_.answers.size(), 3u);
  for (const char* name : {"x.txt", "gone.txt", "late.txt"}) {
    EXPECT_FALSE(Exists(work_ + "/" + name)) << name;
  }
  EXPECT_TRUE(violations_.empty());
}

}  // namespace
}  // namespace ccsandbox::launcher
