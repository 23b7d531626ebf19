#include "launcher/seccomp_test_support.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "launcher/seccomp_baseline.h"

namespace ccsandbox::launcher::testing {

std::vector<sock_filter> ReadProgram(int fd) {
  std::vector<sock_filter> program;
  sock_filter insn;
  for (off_t off = 0; pread(fd, &insn, sizeof(insn), off) == sizeof(insn); off += sizeof(insn)) {
    program.push_back(insn);
  }
  return program;
}

const std::vector<sock_filter>& Program() {
  static const std::vector<sock_filter> program = [] {
    absl::StatusOr<UniqueFd> fd = ExportSeccompBaseline();
    EXPECT_TRUE(fd.ok()) << fd.status();
    return fd.ok() ? ReadProgram(fd->get()) : std::vector<sock_filter>{};
  }();
  return program;
}

ChildResult RunInChild(const std::vector<sock_filter>* program, const std::function<int()>& body) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return {};
  UniqueFd report_r(report[0]), report_w(report[1]);
  const pid_t pid = fork();
  if (pid == 0) {
    if (program != nullptr) {
      sock_fprog prog{static_cast<unsigned short>(program->size()),
                      const_cast<sock_filter*>(program->data())};
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
          syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        _exit(125);
      }
    }
    const int value = body();
    (void)!write(report_w.get(), &value, sizeof(value));
    _exit(0);
  }
  report_w.Reset();
  ChildResult result;
  if (read(report_r.get(), &result.value, sizeof(result.value)) != sizeof(result.value)) {
    result.value = -1;
  }
  waitpid(pid, &result.status, 0);
  return result;
}

int ErrnoOf(long rc) { return rc < 0 ? errno : 0; }

int ControllingPty() {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return -1;
  setsid();
  return open(ptsname(master), O_RDWR);
}

std::optional<uint32_t> Evaluate(const std::vector<sock_filter>& program,
                                 const seccomp_data& data) {
  uint32_t a = 0;
  for (size_t pc = 0; pc < program.size(); ++pc) {
    const sock_filter& insn = program[pc];
    switch (insn.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (insn.k % 4 != 0 || insn.k + 4 > sizeof(data)) return std::nullopt;
        std::memcpy(&a, reinterpret_cast<const char*>(&data) + insn.k, 4);
        break;
      case BPF_ALU | BPF_AND | BPF_K:
        a &= insn.k;
        break;
      case BPF_JMP | BPF_JA:
        pc += insn.k;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
        pc += a == insn.k ? insn.jt : insn.jf;
        break;
      case BPF_JMP | BPF_JGT | BPF_K:
        pc += a > insn.k ? insn.jt : insn.jf;
        break;
      case BPF_JMP | BPF_JGE | BPF_K:
        pc += a >= insn.k ? insn.jt : insn.jf;
        break;
      case BPF_JMP | BPF_JSET | BPF_K:
        pc += (a & insn.k) != 0 ? insn.jt : insn.jf;
        break;
      case BPF_RET | BPF_K:
        return insn.k;
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

void ExpectVerdicts(const std::vector<Verdict>& verdicts) {
  ASSERT_FALSE(Program().empty());
  for (const Verdict& v : verdicts) {
    seccomp_data data{};
    data.arch = v.arch;
    data.nr = v.nr;
    for (size_t i = 0; i < v.args.size(); ++i) data.args[i] = v.args[i];
    EXPECT_EQ(Evaluate(Program(), data), std::optional<uint32_t>(v.expected)) << v.what;
  }
}

}  // namespace ccsandbox::launcher::testing
