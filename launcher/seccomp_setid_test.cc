// The seccomp baseline's set-id rules: no call that sets a mode (chmod family, open/creat with
// O_CREAT or O_TMPFILE, mknod) may put a set-uid or set-gid bit on disk, checked by running each
// call in a child, with and without the filter, and on the program itself.
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "launcher/seccomp_baseline.h"
#include "launcher/seccomp_test_support.h"

namespace ccsandbox::launcher {
namespace {

using testing::ChildResult;
using testing::ErrnoOf;
using testing::ExpectVerdicts;
using testing::kAllow;
using testing::kDeny;
using testing::Program;
using testing::RunInChild;

constexpr long kFchmodat2 = 452;  // x86_64; not in these kernel headers

// The baseline as a run with the create guard gets it (SetIdRule::kNotify).
const std::vector<sock_filter>& NotifyProgram() {
  static const std::vector<sock_filter> program = [] {
    absl::StatusOr<UniqueFd> fd = ExportSeccompBaseline(SetIdRule::kNotify);
    EXPECT_TRUE(fd.ok()) << fd.status();
    return fd.ok() ? testing::ReadProgram(fd->get()) : std::vector<sock_filter>{};
  }();
  return program;
}

// A call that sets a mode on "f" (an existing file, mode 0644) or creates
// "new" with one, in a scratch directory.
struct ModeCall {
  std::string name;
  std::function<long(const std::string& dir, mode_t mode)> call;
  bool creates;  // names "new"; else changes "f"
  // mkdir: no rule, the kernel itself keeps only 01777 of the mode.
  bool kernel_drops_setid = false;
};

// An O_TMPFILE inode opened by `open_tmpfile`, then named "new" the usual way
// (linkat of /proc/self/fd/N): a set-id file that exists only once linked.
long TmpfileThenLink(const std::string& dir, const std::function<long()>& open_tmpfile) {
  const long fd = open_tmpfile();
  if (fd < 0) return fd;
  const UniqueFd owned(static_cast<int>(fd));
  const std::string self = absl::StrCat("/proc/self/fd/", fd);
  return linkat(AT_FDCWD, self.c_str(), AT_FDCWD, (dir + "/new").c_str(), AT_SYMLINK_FOLLOW);
}

long Closed(long fd) {
  if (fd >= 0) close(static_cast<int>(fd));
  return fd < 0 ? fd : 0;
}

// Raw syscalls: glibc's open() is openat, its chmod() may be fchmodat; each
// rule is reached by its own number.
std::vector<ModeCall> ModeCalls() {
  auto f = [](const std::string& dir) { return dir + "/f"; };
  auto fresh = [](const std::string& dir) { return dir + "/new"; };
  return {
      {"chmod", [=](const std::string& d, mode_t m) { return syscall(SYS_chmod, f(d).c_str(), m); },
       false},
      // The kernel keeps 16 bits of the mode, so the filter must ignore the
      // rest.
      {"chmod_high_bits",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_chmod, f(d).c_str(), (1UL << 32) | m);
       },
       false},
      {"fchmod",
       [=](const std::string& d, mode_t m) {
         const UniqueFd fd(open(f(d).c_str(), O_RDONLY | O_CLOEXEC));
         return syscall(SYS_fchmod, fd.get(), m);
       },
       false},
      {"fchmodat",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_fchmodat, AT_FDCWD, f(d).c_str(), m);
       },
       false},
      {"fchmodat2",
       [=](const std::string& d, mode_t m) {
         return syscall(kFchmodat2, AT_FDCWD, f(d).c_str(), m, 0);
       },
       false},
      {"open_creat",
       [=](const std::string& d, mode_t m) {
         return Closed(syscall(SYS_open, fresh(d).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, m));
       },
       true},
      {"openat_creat",
       [=](const std::string& d, mode_t m) {
         const UniqueFd dir(open(d.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC));
         return Closed(
             syscall(SYS_openat, dir.get(), "new", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, m));
       },
       true},
      {"open_tmpfile",
       [](const std::string& d, mode_t m) {
         return TmpfileThenLink(
             d, [&] { return syscall(SYS_open, d.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, m); });
       },
       true},
      {"openat_tmpfile",
       [](const std::string& d, mode_t m) {
         return TmpfileThenLink(d, [&] {
           return syscall(SYS_openat, AT_FDCWD, d.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, m);
         });
       },
       true},
      {"creat",
       [=](const std::string& d, mode_t m) {
         return Closed(syscall(SYS_creat, fresh(d).c_str(), m));
       },
       true},
      {"mknod_reg",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_mknod, fresh(d).c_str(), S_IFREG | m, 0);
       },
       true},
      {"mknodat_reg",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_mknodat, AT_FDCWD, fresh(d).c_str(), S_IFREG | m, 0);
       },
       true},
      {"mknod_fifo",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_mknod, fresh(d).c_str(), S_IFIFO | m, 0);
       },
       true},
      {"mkdir",
       [=](const std::string& d, mode_t m) { return syscall(SYS_mkdir, fresh(d).c_str(), m); },
       true, true},
      {"mkdirat",
       [=](const std::string& d, mode_t m) {
         return syscall(SYS_mkdirat, AT_FDCWD, fresh(d).c_str(), m);
       },
       true, true},
  };
}

struct ModeCase {
  ModeCall call;
  mode_t mode;
  bool Denied() const { return (mode & (S_ISUID | S_ISGID)) != 0 && !call.kernel_drops_setid; }
};

std::vector<ModeCase> ModeCases() {
  std::vector<ModeCase> cases;
  for (const ModeCall& call : ModeCalls()) {
    for (mode_t mode : {04755, 02755, 06755, 0755}) cases.push_back({call, mode});
  }
  return cases;
}

void PrintTo(const ModeCase& c, std::ostream* os) {
  *os << c.call.name << " " << std::oct << c.mode;
}

struct ModeOutcome {
  int error = -1;              // the call's errno, 0 if it worked
  std::optional<mode_t> mode;  // of the inspected name & 07777; nullopt: absent
};

// Runs the case in a child, under `program` unless it is null, with umask 022,
// in a scratch directory (not set-gid, so nothing is inherited); reports what
// the call returned and what is on disk afterwards.
ModeOutcome RunModeCase(const ModeCase& c, const std::vector<sock_filter>* program) {
  ModeOutcome outcome;
  std::string dir = ::testing::TempDir() + "/ccsandbox-mode-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return outcome;
  absl::Cleanup remove = [&] { std::filesystem::remove_all(dir); };
  const std::string f = dir + "/f";
  const UniqueFd made(open(f.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
  if (chmod(dir.c_str(), 0700) != 0 || !made.valid() || fchmod(made.get(), 0644) != 0) {
    return outcome;
  }
  const ChildResult result = RunInChild(program, [&] {
    umask(022);
    return ErrnoOf(c.call.call(dir, c.mode));
  });
  if (!WIFEXITED(result.status) || WEXITSTATUS(result.status) != 0) {
    return outcome;
  }
  outcome.error = result.value;
  struct stat st;
  if (lstat((c.call.creates ? dir + "/new" : f).c_str(), &st) == 0) {
    outcome.mode = st.st_mode & 07777;
  }
  return outcome;
}

class ModeCaseTest : public ::testing::TestWithParam<ModeCase> {};

TEST_P(ModeCaseTest, NoSetIdBitReachesTheDiskUnderTheFilter) {
  const ModeCase& c = GetParam();
  ASSERT_FALSE(Program().empty());
  const ModeOutcome got = RunModeCase(c, &Program());
  ASSERT_NE(got.error, -1) << "the case could not run";
  if (c.Denied()) {
    EXPECT_EQ(got.error, EPERM) << strerrorname_np(got.error);
    // Unchanged: "f" as it was, "new" never created.
    EXPECT_EQ(got.mode, c.call.creates ? std::nullopt : std::optional<mode_t>(0644));
  } else {
    EXPECT_EQ(got.error, 0) << strerrorname_np(got.error);
    EXPECT_EQ(got.mode, std::optional<mode_t>(c.mode & 0777));
  }
}

// The baseline of a run with the create guard notifies instead (its supervisor answers and
// reports): alone, without the guard's listener, every such call fails with ENOSYS, and no
// bit reaches the disk either.
TEST_P(ModeCaseTest, GuardedRunsBaselineFailsClosedWithoutTheGuardsListener) {
  const ModeCase& c = GetParam();
  ASSERT_FALSE(NotifyProgram().empty());
  const ModeOutcome got = RunModeCase(c, &NotifyProgram());
  ASSERT_NE(got.error, -1) << "the case could not run";
  if (c.Denied()) {
    EXPECT_EQ(got.error, ENOSYS) << strerrorname_np(got.error);
    EXPECT_EQ(got.mode, c.call.creates ? std::nullopt : std::optional<mode_t>(0644));
  } else {
    EXPECT_EQ(got.error, 0) << strerrorname_np(got.error);
    EXPECT_EQ(got.mode, std::optional<mode_t>(c.mode & 0777));
  }
}

// Without the filter the same calls do set the bits (so the refusals above
// are the filter's), except mkdir, whose mode the kernel itself strips.
TEST_P(ModeCaseTest, WithoutTheFilter) {
  const ModeCase& c = GetParam();
  const ModeOutcome got = RunModeCase(c, nullptr);
  ASSERT_NE(got.error, -1) << "the case could not run";
  EXPECT_EQ(got.error, 0) << strerrorname_np(got.error);
  EXPECT_EQ(got.mode,
            std::optional<mode_t>(c.call.kernel_drops_setid ? c.mode & 0777 : c.mode & 07777));
}

INSTANTIATE_TEST_SUITE_P(Baseline, ModeCaseTest, ::testing::ValuesIn(ModeCases()),
                         [](const ::testing::TestParamInfo<ModeCase>& info) {
                           return absl::StrFormat("%s_%04o", info.param.call.name, info.param.mode);
                         });

// The set-id rules on the program itself: holds on a kernel without a call
// (fchmodat2 is Linux 6.6+), and pins the AND of open's two comparisons.
TEST(SeccompBaselineSetIdTest, ProgramDecidesOnTheModeArgument) {
  ExpectVerdicts({
      {"fchmodat2 04755", kFchmodat2, {0, 0, 04755, 0}, kDeny},
      {"fchmodat2 02755", kFchmodat2, {0, 0, 02755, 0}, kDeny},
      {"fchmodat2 01777", kFchmodat2, {0, 0, 01777, 0}, kAllow},
      {"chmod 04755, high bits", SYS_chmod, {0, (1UL << 40) | 04755}, kDeny},
      {"chmod 0777, high bits", SYS_chmod, {0, (1UL << 40) | 0777}, kAllow},
      {"open O_CREAT 02000", SYS_open, {0, O_CREAT | O_WRONLY, 02000}, kDeny},
      {"open O_TMPFILE 04000", SYS_open, {0, O_TMPFILE | O_RDWR, 04000}, kDeny},
      {"open O_RDONLY 06755", SYS_open, {0, O_RDONLY, 06755}, kAllow},
      {"open O_CREAT 0777", SYS_open, {0, O_CREAT | O_WRONLY, 0777}, kAllow},
      {"openat O_CREAT 04000", SYS_openat, {0, 0, O_CREAT, 04000}, kDeny},
      {"openat O_RDONLY 04000", SYS_openat, {0, 0, O_RDONLY, 04000}, kAllow},
      {"mknodat FIFO 02644", SYS_mknodat, {0, 0, S_IFIFO | 02644, 0}, kDeny},
      {"mkdir 06777", SYS_mkdir, {0, 06777}, kAllow},
      {"openat2", SYS_openat2, {}, SECCOMP_RET_ERRNO | ENOSYS},
  });
}

// With SetIdRule::kNotify the same comparisons notify, and nothing else changes.
TEST(SeccompBaselineSetIdTest, AGuardedRunsProgramNotifiesOnTheSameModes) {
  const std::vector<sock_filter>& program = NotifyProgram();
  ASSERT_FALSE(program.empty());
  struct Case {
    const char* what;
    int nr;
    std::vector<uint64_t> args;
    uint32_t expected;
  } cases[] = {
      {"chmod 04755", SYS_chmod, {0, 04755}, SECCOMP_RET_USER_NOTIF},
      {"chmod 0755", SYS_chmod, {0, 0755}, kAllow},
      {"fchmod 02755", SYS_fchmod, {3, 02755}, SECCOMP_RET_USER_NOTIF},
      {"fchmodat 06755", SYS_fchmodat, {0, 0, 06755}, SECCOMP_RET_USER_NOTIF},
      {"fchmodat2 04755", kFchmodat2, {0, 0, 04755, 0}, SECCOMP_RET_USER_NOTIF},
      {"open O_CREAT 02000", SYS_open, {0, O_CREAT | O_WRONLY, 02000}, SECCOMP_RET_USER_NOTIF},
      {"openat O_TMPFILE 04000",
       SYS_openat,
       {0, 0, O_TMPFILE | O_RDWR, 04000},
       SECCOMP_RET_USER_NOTIF},
      {"openat O_RDONLY 04000", SYS_openat, {0, 0, O_RDONLY, 04000}, kAllow},
      {"creat 04755", SYS_creat, {0, 04755}, SECCOMP_RET_USER_NOTIF},
      {"mknodat FIFO 02644", SYS_mknodat, {0, 0, S_IFIFO | 02644, 0}, SECCOMP_RET_USER_NOTIF},
      {"ptrace", SYS_ptrace, {}, kDeny},
      {"openat2", SYS_openat2, {}, SECCOMP_RET_ERRNO | ENOSYS},
  };
  for (const Case& c : cases) {
    seccomp_data data{};
    data.nr = c.nr;
    data.arch = AUDIT_ARCH_X86_64;
    for (size_t i = 0; i < c.args.size(); ++i) data.args[i] = c.args[i];
    EXPECT_EQ(testing::Evaluate(program, data), std::optional<uint32_t>(c.expected)) << c.what;
  }
}

}  // namespace
}  // namespace ccsandbox::launcher
