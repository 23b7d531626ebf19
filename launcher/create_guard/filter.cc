#include "launcher/create_guard/filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#if !defined(__x86_64__) || defined(__ILP32__)
#error "create_filter is only verified on x86_64; review the syscall list first"
#endif

namespace ccsandbox::launcher {
namespace {

struct Rule {
  int syscall;
  uint32_t action;
  std::optional<scmp_arg_cmp> when = std::nullopt;
  std::optional<scmp_arg_cmp> and_when = std::nullopt;
};

// `(arg & O_CREAT) == O_CREAT` on the low 32 bits (the kernel reads open's
// flags as an int, so high bits cannot hide the flag).
constexpr scmp_arg_cmp HasCreate(unsigned arg) {
  return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT};
}

constexpr scmp_arg_cmp HasFlag(uint64_t flag) {
  return scmp_arg_cmp{0, SCMP_CMP_MASKED_EQ, flag, flag};
}

// `arg` has every bit of `bits` (its low 32 bits: a mode is a umode_t, open's flags an int).
constexpr scmp_arg_cmp ArgHas(unsigned arg, uint64_t bits) {
  return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, bits, bits};
}

// x86_64's fchmodat2 (Linux 6.6), by number: these kernel headers predate it.
constexpr int kFchmodat2 = 452;
// The kernel's __O_TMPFILE bit (O_TMPFILE without the O_DIRECTORY it adds).
constexpr uint64_t kTmpfileBit = O_TMPFILE & ~O_DIRECTORY;

const Rule kRules[] = {
    {SCMP_SYS(open), SCMP_ACT_NOTIFY, HasCreate(1)},
    {SCMP_SYS(openat), SCMP_ACT_NOTIFY, HasCreate(2)},
    {SCMP_SYS(creat), SCMP_ACT_NOTIFY},
    {SCMP_SYS(mkdir), SCMP_ACT_NOTIFY},
    {SCMP_SYS(mkdirat), SCMP_ACT_NOTIFY},
    {SCMP_SYS(mknod), SCMP_ACT_NOTIFY},
    {SCMP_SYS(mknodat), SCMP_ACT_NOTIFY},
    {SCMP_SYS(symlink), SCMP_ACT_NOTIFY},
    {SCMP_SYS(symlinkat), SCMP_ACT_NOTIFY},
    {SCMP_SYS(link), SCMP_ACT_NOTIFY},
    {SCMP_SYS(linkat), SCMP_ACT_NOTIFY},
    {SCMP_SYS(rename), SCMP_ACT_NOTIFY},
    {SCMP_SYS(renameat), SCMP_ACT_NOTIFY},
    {SCMP_SYS(renameat2), SCMP_ACT_NOTIFY},
    // A set-id mode (S_ISUID or S_ISGID) in a chmod, or given to an O_TMPFILE: the supervisor
    // refuses it with EPERM and reports it (the creations above carry theirs to it anyway).
    // The guarded run's seccomp baseline notifies on the same calls (seccomp_baseline.h).
    {SCMP_SYS(chmod), SCMP_ACT_NOTIFY, ArgHas(1, S_ISUID)},
    {SCMP_SYS(chmod), SCMP_ACT_NOTIFY, ArgHas(1, S_ISGID)},
    {SCMP_SYS(fchmod), SCMP_ACT_NOTIFY, ArgHas(1, S_ISUID)},
    {SCMP_SYS(fchmod), SCMP_ACT_NOTIFY, ArgHas(1, S_ISGID)},
    {SCMP_SYS(fchmodat), SCMP_ACT_NOTIFY, ArgHas(2, S_ISUID)},
    {SCMP_SYS(fchmodat), SCMP_ACT_NOTIFY, ArgHas(2, S_ISGID)},
    {kFchmodat2, SCMP_ACT_NOTIFY, ArgHas(2, S_ISUID)},
    {kFchmodat2, SCMP_ACT_NOTIFY, ArgHas(2, S_ISGID)},
    {SCMP_SYS(open), SCMP_ACT_NOTIFY, ArgHas(1, kTmpfileBit), ArgHas(2, S_ISUID)},
    {SCMP_SYS(open), SCMP_ACT_NOTIFY, ArgHas(1, kTmpfileBit), ArgHas(2, S_ISGID)},
    {SCMP_SYS(openat), SCMP_ACT_NOTIFY, ArgHas(2, kTmpfileBit), ArgHas(3, S_ISUID)},
    {SCMP_SYS(openat), SCMP_ACT_NOTIFY, ArgHas(2, kTmpfileBit), ArgHas(3, S_ISGID)},
    // Its open_how (O_CREAT included) sits behind a pointer seccomp cannot
    // read.
    {SCMP_SYS(openat2), SCMP_ACT_ERRNO(ENOSYS)},
    // The supervisor enters the sandbox's mount namespace and root once and
    // resolves every path there: a process under the filter must not get
    // another root or mount namespace.
    {SCMP_SYS(chroot), SCMP_ACT_ERRNO(EPERM)},
    {SCMP_SYS(pivot_root), SCMP_ACT_ERRNO(EPERM)},
    {SCMP_SYS(setns), SCMP_ACT_ERRNO(EPERM)},
    {SCMP_SYS(unshare), SCMP_ACT_ERRNO(EPERM), HasFlag(CLONE_NEWNS)},
    {SCMP_SYS(unshare), SCMP_ACT_ERRNO(EPERM), HasFlag(CLONE_NEWUSER)},
    {SCMP_SYS(clone), SCMP_ACT_ERRNO(EPERM), HasFlag(CLONE_NEWNS)},
    {SCMP_SYS(clone), SCMP_ACT_ERRNO(EPERM), HasFlag(CLONE_NEWUSER)},
    // Its flags sit behind a pointer; ENOSYS makes glibc fall back to clone.
    {SCMP_SYS(clone3), SCMP_ACT_ERRNO(ENOSYS)},
    // A path buffer in userfaultfd-backed memory would stall the supervisor's
    // read of it.
    {SCMP_SYS(userfaultfd), SCMP_ACT_ERRNO(EPERM)},
    // io_uring runs its ops without seccomp seeing them (openat, mkdirat,
    // renameat ...).
    {SCMP_SYS(io_uring_setup), SCMP_ACT_ERRNO(EPERM)},
    {SCMP_SYS(io_uring_enter), SCMP_ACT_ERRNO(EPERM)},
    {SCMP_SYS(io_uring_register), SCMP_ACT_ERRNO(EPERM)},
};

using FilterContext = std::unique_ptr<void, decltype(&seccomp_release)>;

absl::Status SeccompError(absl::string_view what, int rc) {
  return absl::InternalError(absl::StrCat("create filter: ", what, " failed: ", strerror(-rc)));
}

}  // namespace

absl::StatusOr<std::string> CreateFilterProgram() {
  FilterContext ctx(seccomp_init(SCMP_ACT_ALLOW), &seccomp_release);
  if (ctx == nullptr) return absl::InternalError("create filter: seccomp_init failed");
  if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
    return absl::FailedPreconditionError("create filter: libseccomp's native arch is not x86_64");
  }
  // Another ABI has other syscall numbers: the rules would not see its open or
  // rename.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
      rc != 0) {
    return SeccompError("setting the bad-arch action", rc);
  }
  for (const Rule& rule : kRules) {
    // Comparisons in one rule must all hold (libseccomp ANDs them).
    scmp_arg_cmp comparisons[2] = {};
    unsigned count = 0;
    for (const std::optional<scmp_arg_cmp>& c : {rule.when, rule.and_when}) {
      if (c.has_value()) comparisons[count++] = *c;
    }
    const int rc =
        seccomp_rule_add_exact_array(ctx.get(), rule.action, rule.syscall, count, comparisons);
    if (rc != 0) {
      return SeccompError(absl::StrCat("adding the rule for syscall ", rule.syscall), rc);
    }
  }
  UniqueFd fd(memfd_create("ccsandbox-create-filter", MFD_CLOEXEC));
  if (!fd.valid()) {
    return absl::InternalError(absl::StrCat("create filter: memfd_create: ", strerror(errno)));
  }
  if (int rc = seccomp_export_bpf(ctx.get(), fd.get()); rc != 0) {
    return SeccompError("seccomp_export_bpf", rc);
  }
  std::string program;
  char buf[4096];
  for (off_t offset = 0;;) {
    ssize_t n = pread(fd.get(), buf, sizeof(buf), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat("create filter: read: ", strerror(errno)));
    if (n == 0) break;
    program.append(buf, n);
    offset += n;
  }
  if (program.empty() || program.size() % sizeof(sock_filter) != 0) {
    return absl::InternalError("create filter: exported program has a bad size");
  }
  return program;
}

absl::StatusOr<UniqueFd> InstallCreateFilter(const std::string& program) {
  if (program.empty() || program.size() % sizeof(sock_filter) != 0) {
    return absl::InvalidArgumentError("create filter: bad program size");
  }
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(program.size() / sizeof(sock_filter));
  prog.filter = reinterpret_cast<sock_filter*>(const_cast<char*>(program.data()));
  // libseccomp 2.5.4 cannot ask for WAIT_KILLABLE_RECV: load the exported
  // program ourselves.
  const long fd =
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
              SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
  if (fd < 0) {
    if (errno == EINVAL) {
      return absl::FailedPreconditionError(
          "create filter: the kernel refused "
          "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV "
          "(needs Linux 5.19+)");
    }
    return absl::InternalError(absl::StrCat("create filter: seccomp(): ", strerror(errno)));
  }
  // The listener is created close-on-exec; keep it that way explicitly.
  fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
  return UniqueFd(static_cast<int>(fd));
}

}  // namespace ccsandbox::launcher
