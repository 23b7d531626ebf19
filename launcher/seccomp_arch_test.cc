// The seccomp baseline against foreign ABIs: i386 (int 0x80) and x32 system calls kill the
// process, made for real in a child and decided on the program itself.
#include <linux/audit.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "gtest/gtest.h"
#include "launcher/seccomp_test_support.h"

namespace ccsandbox::launcher {
namespace {

using testing::ChildResult;
using testing::ErrnoOf;
using testing::ExpectVerdicts;
using testing::kAllow;
using testing::kDeny;
using testing::kKill;
using testing::Program;
using testing::RunInChild;

constexpr long kX32SyscallBit = 0x40000000;  // __X32_SYSCALL_BIT

long Int80(long nr, long a = 0, long b = 0, long c = 0) {
  long rc;
  asm volatile("int $0x80"
               : "=a"(rc)
               : "a"(nr), "b"(a), "c"(b), "d"(c)
               : "memory", "r8", "r9", "r10", "r11");
  return rc;
}

constexpr long kI386Getpid = 20;
constexpr long kI386Ptrace = 26;
constexpr long kX32Getpid = 39;
constexpr long kX32Ptrace = 521;

bool KilledBySigsys(const ChildResult& r) {
  return WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSYS;
}

TEST(SeccompBaselineArchTest, I386SyscallKillsTheProcess) {
  const ChildResult control = RunInChild(nullptr, [] { return Int80(kI386Getpid) > 0 ? 0 : 1; });
  if (!WIFEXITED(control.status)) {
    // No IA32 emulation in this kernel: int 0x80 faults before any filter could see it, so the
    // property holds by the kernel (the filter's own verdict is pinned by the test below). What
    // still must hold: under the baseline it cannot run either.
    std::printf(
        "no IA32 emulation here: int 0x80 is fatal (signal %d) with or without the "
        "baseline\n",
        WIFSIGNALED(control.status) ? WTERMSIG(control.status) : -1);
    const ChildResult sandboxed = RunInChild(&Program(), [] { return Int80(kI386Getpid) > 0; });
    EXPECT_FALSE(WIFEXITED(sandboxed.status)) << "int 0x80 returned under the baseline";
    return;
  }
  ASSERT_EQ(control.value, 0);

  EXPECT_TRUE(KilledBySigsys(RunInChild(&Program(), [] { return Int80(kI386Getpid) > 0; })));
  EXPECT_TRUE(KilledBySigsys(
      RunInChild(&Program(), [] { return static_cast<int>(Int80(kI386Ptrace, PTRACE_TRACEME)); })));
}

// The kernel here may lack CONFIG_X86_X32_ABI (then x32 numbers give ENOSYS),
// but seccomp sees the number first: the filter must kill before the kernel
// decides.
TEST(SeccompBaselineArchTest, X32SyscallKillsTheProcess) {
  const ChildResult control =
      RunInChild(nullptr, [] { return ErrnoOf(syscall(kX32SyscallBit | kX32Getpid)); });
  ASSERT_TRUE(WIFEXITED(control.status));

  EXPECT_TRUE(KilledBySigsys(
      RunInChild(&Program(), [] { return ErrnoOf(syscall(kX32SyscallBit | kX32Getpid)); })));
  EXPECT_TRUE(KilledBySigsys(RunInChild(&Program(), [] {
    return ErrnoOf(syscall(kX32SyscallBit | kX32Ptrace, PTRACE_TRACEME, 0, 0, 0));
  })));
}

TEST(SeccompBaselineArchTest, ProgramSendsForeignAbisToTheBadArchAction) {
  ExpectVerdicts({
      {"i386 ptrace", kI386Ptrace, {}, kKill, AUDIT_ARCH_I386},
      {"i386 getpid", kI386Getpid, {}, kKill, AUDIT_ARCH_I386},
      {"x32 ptrace", kX32SyscallBit | kX32Ptrace, {}, kKill},
      {"x32 getpid", kX32SyscallBit | kX32Getpid, {}, kKill},
      {"x86_64 ptrace", SYS_ptrace, {}, kDeny},
      {"x86_64 getpid", SYS_getpid, {}, kAllow},
      {"TIOCSTI, high bits", SYS_ioctl, {0, TIOCSTI | (7UL << 32)}, kDeny},
      {"TIOCGWINSZ", SYS_ioctl, {0, TIOCGWINSZ}, kAllow},
  });
}

}  // namespace
}  // namespace ccsandbox::launcher
