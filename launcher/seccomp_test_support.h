// Test-only: what the seccomp baseline tests share. The exported program, a child that runs a
// function under it (loaded the way bwrap loads it), and an evaluator that runs the program on a
// seccomp_data by hand, for calls this kernel cannot make.
#ifndef CCSANDBOX_LAUNCHER_SECCOMP_TEST_SUPPORT_H_
#define CCSANDBOX_LAUNCHER_SECCOMP_TEST_SUPPORT_H_

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace ccsandbox::launcher::testing {

// The exported bytes, read without moving the fd's offset.
std::vector<sock_filter> ReadProgram(int fd);

// The baseline as ExportSeccompBaseline() exports it, read once; empty (and a test failure) if
// the export failed.
const std::vector<sock_filter>& Program();

struct ChildResult {
  int status = 0;  // wait status
  int value = -1;  // what the body returned, -1 if it never reported
};

// Forks; the child loads `program` the way bwrap does (no_new_privs, then a
// seccomp filter), unless it is null, runs `body`, and reports the int it
// returns.
ChildResult RunInChild(const std::vector<sock_filter>* program, const std::function<int()>& body);

int ErrnoOf(long rc);

// A pty slave that is our controlling terminal, like the one an agent's shell
// would have.
int ControllingPty();

// Runs `program` on `data` as the kernel would, for the opcodes libseccomp
// emits; nullopt on any other. Covers hosts whose kernel cannot make the call
// at all (no int 0x80 here).
std::optional<uint32_t> Evaluate(const std::vector<sock_filter>& program, const seccomp_data& data);

inline constexpr uint32_t kDeny = SECCOMP_RET_ERRNO | EPERM;
inline constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
inline constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;

struct Verdict {
  const char* what;
  int nr;
  std::vector<uint64_t> args;
  uint32_t expected;  // the program's return value
  uint32_t arch = AUDIT_ARCH_X86_64;
};

// Expects Evaluate(Program(), ...) to give each verdict's `expected`.
void ExpectVerdicts(const std::vector<Verdict>& verdicts);

}  // namespace ccsandbox::launcher::testing

#endif  // CCSANDBOX_LAUNCHER_SECCOMP_TEST_SUPPORT_H_
