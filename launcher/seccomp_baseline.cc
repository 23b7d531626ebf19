#include "launcher/seccomp_baseline.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

// clone's flags as arg0 and the x32 handling below are x86_64 facts.
#if !defined(__x86_64__) || defined(__ILP32__)
#error "seccomp_baseline is only verified on x86_64; review the rules first"
#endif

namespace ccsandbox::launcher {
namespace {

struct Rule {
  int syscall;
  int error;                                            // the call fails with this errno
  std::optional<scmp_arg_cmp> when = std::nullopt;      // only if this holds
  std::optional<scmp_arg_cmp> and_when = std::nullopt;  // and this
  bool set_id = false;  // a set-id mode: SetIdRule decides the action
};

// `(arg & mask) == value`. libseccomp tests a 64-bit argument as two 32-bit
// halves; a mask without high bits ignores the high half, so setting high bits
// cannot dodge the rule.
constexpr scmp_arg_cmp ArgMasked(unsigned arg, uint64_t mask, uint64_t value) {
  return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, mask, value};
}

// The kernel truncates ioctl's command to 32 bits: compare only those.
constexpr scmp_arg_cmp IoctlCommand(unsigned long command) {
  return ArgMasked(1, 0xFFFFFFFFu, command);
}

constexpr scmp_arg_cmp HasCloneNewUser() { return ArgMasked(0, CLONE_NEWUSER, CLONE_NEWUSER); }

// `arg` has every bit of `bits` set.
constexpr scmp_arg_cmp ArgHas(unsigned arg, uint64_t bits) { return ArgMasked(arg, bits, bits); }

// `arg` is not `value` (all 64 bits: high bits only make the rule match more).
constexpr scmp_arg_cmp ArgNot(unsigned arg, uint64_t value) {
  return scmp_arg_cmp{arg, SCMP_CMP_NE, value, 0};
}
constexpr scmp_arg_cmp ArgIs(unsigned arg, uint64_t value) {
  return scmp_arg_cmp{arg, SCMP_CMP_EQ, value, 0};
}

// A rule on a set-id mode (always EPERM without a create guard; see SetIdRule).
constexpr Rule SetId(int syscall, scmp_arg_cmp when,
                     std::optional<scmp_arg_cmp> and_when = std::nullopt) {
  return Rule{syscall, EPERM, when, and_when, /*set_id=*/true};
}

// setpriority's and ioprio_set's "every process of a user" selectors.
constexpr uint64_t kPrioUser = 2;       // PRIO_USER
constexpr uint64_t kIoprioWhoUser = 3;  // IOPRIO_WHO_USER

// x86_64's fchmodat2 (Linux 6.6). The kernel headers here predate it, so
// SCMP_SYS(fchmodat2) does not compile; libseccomp 2.5.4 takes the number.
constexpr int kFchmodat2 = 452;

// The kernel's __O_TMPFILE bit (O_TMPFILE without the O_DIRECTORY it adds):
// with it, open applies its mode to a new inode, or fails with EINVAL.
constexpr uint64_t kTmpfileBit = O_TMPFILE & ~O_DIRECTORY;

constexpr Rule kRules[] = {
    // io_uring runs the ops it is handed without seccomp ever seeing them.
    {SCMP_SYS(io_uring_setup), EPERM},
    {SCMP_SYS(io_uring_enter), EPERM},
    {SCMP_SYS(io_uring_register), EPERM},
    // Attaching to another sandboxed process reads and rewrites its memory.
    {SCMP_SYS(ptrace), EPERM},
    // Reads or writes another process's memory without a ptrace attach.
    {SCMP_SYS(process_vm_readv), EPERM},
    {SCMP_SYS(process_vm_writev), EPERM},
    // Replaces the running kernel.
    {SCMP_SYS(kexec_load), EPERM},
    {SCMP_SYS(kexec_file_load), EPERM},
    // eBPF runs code in the kernel: a large verifier attack surface.
    {SCMP_SYS(bpf), EPERM},
    // Leaks kernel addresses and timing; a long record of kernel bugs.
    {SCMP_SYS(perf_event_open), EPERM},
    // Stalls kernel copies from user memory: makes kernel races exploitable.
    {SCMP_SYS(userfaultfd), EPERM},
    // Keyrings are not namespaced: reaches keys outside the sandbox.
    {SCMP_SYS(add_key), EPERM},
    {SCMP_SYS(request_key), EPERM},
    {SCMP_SYS(keyctl), EPERM},
    // Types into the terminal: commands run in the user's shell afterwards.
    {SCMP_SYS(ioctl), EPERM, IoctlCommand(TIOCSTI)},
    // Pastes into a virtual console's input: the same injection as TIOCSTI.
    {SCMP_SYS(ioctl), EPERM, IoctlCommand(TIOCLINUX)},
    // Reshaping the mount tree uncovers what bwrap's mounts hide or protect.
    {SCMP_SYS(mount), EPERM},
    {SCMP_SYS(umount2), EPERM},
    {SCMP_SYS(pivot_root), EPERM},
    {SCMP_SYS(move_mount), EPERM},
    {SCMP_SYS(open_tree), EPERM},
    {SCMP_SYS(fsopen), EPERM},
    {SCMP_SYS(fsmount), EPERM},
    {SCMP_SYS(fspick), EPERM},
    // Clears MOUNT_ATTR_RDONLY on a mount: the new mount API's remount.
    {SCMP_SYS(mount_setattr), EPERM},
    // Loads or unloads kernel code.
    {SCMP_SYS(init_module), EPERM},
    {SCMP_SYS(finit_module), EPERM},
    {SCMP_SYS(delete_module), EPERM},
    // Moves every process's paged-out memory to a file of the sandbox's choice.
    {SCMP_SYS(swapon), EPERM},
    {SCMP_SYS(swapoff), EPERM},
    // Halts or reboots the machine.
    {SCMP_SYS(reboot), EPERM},
    // Opens any inode by handle, past the bind mounts (the "shocker" escape).
    {SCMP_SYS(open_by_handle_at), EPERM},
    // A nested user namespace opens root-only kernel code (netfilter, mounts).
    {SCMP_SYS(unshare), EPERM, HasCloneNewUser()},
    {SCMP_SYS(clone), EPERM, HasCloneNewUser()},
    // Its flags sit behind a pointer seccomp cannot read, so CLONE_NEWUSER
    // would pass; ENOSYS rather than EPERM makes glibc fall back to clone.
    {SCMP_SYS(clone3), ENOSYS},
    // A set-id file left in a writable bind runs with its owner's or group's
    // rights on the host, outside every layer of the sandbox. The mode is a
    // umode_t (the kernel keeps 16 bits); MASKED_EQ tests one bit per rule.
    SetId(SCMP_SYS(chmod), ArgHas(1, S_ISUID)),
    SetId(SCMP_SYS(chmod), ArgHas(1, S_ISGID)),
    SetId(SCMP_SYS(fchmod), ArgHas(1, S_ISUID)),
    SetId(SCMP_SYS(fchmod), ArgHas(1, S_ISGID)),
    SetId(SCMP_SYS(fchmodat), ArgHas(2, S_ISUID)),
    SetId(SCMP_SYS(fchmodat), ArgHas(2, S_ISGID)),
    SetId(kFchmodat2, ArgHas(2, S_ISUID)),
    SetId(kFchmodat2, ArgHas(2, S_ISGID)),
    // The same file created set-id. open's mode counts only with O_CREAT or
    // O_TMPFILE. mkdir needs no rule: the kernel keeps only 01777 of its mode.
    SetId(SCMP_SYS(open), ArgHas(1, O_CREAT), ArgHas(2, S_ISUID)),
    SetId(SCMP_SYS(open), ArgHas(1, O_CREAT), ArgHas(2, S_ISGID)),
    SetId(SCMP_SYS(open), ArgHas(1, kTmpfileBit), ArgHas(2, S_ISUID)),
    SetId(SCMP_SYS(open), ArgHas(1, kTmpfileBit), ArgHas(2, S_ISGID)),
    SetId(SCMP_SYS(openat), ArgHas(2, O_CREAT), ArgHas(3, S_ISUID)),
    SetId(SCMP_SYS(openat), ArgHas(2, O_CREAT), ArgHas(3, S_ISGID)),
    SetId(SCMP_SYS(openat), ArgHas(2, kTmpfileBit), ArgHas(3, S_ISUID)),
    SetId(SCMP_SYS(openat), ArgHas(2, kTmpfileBit), ArgHas(3, S_ISGID)),
    SetId(SCMP_SYS(creat), ArgHas(1, S_ISUID)),
    SetId(SCMP_SYS(creat), ArgHas(1, S_ISGID)),
    SetId(SCMP_SYS(mknod), ArgHas(1, S_ISUID)),
    SetId(SCMP_SYS(mknod), ArgHas(1, S_ISGID)),
    SetId(SCMP_SYS(mknodat), ArgHas(2, S_ISUID)),
    SetId(SCMP_SYS(mknodat), ArgHas(2, S_ISGID)),
    // Its mode sits behind a pointer, so a set-id create would pass; ENOSYS
    // makes callers (glibc never uses it for open) fall back to openat.
    {SCMP_SYS(openat2), ENOSYS},
    // Another process of the same uid — the sandbox's init, an Exec's reaper, another Exec —
    // would take limits, priorities or CPUs set by the command: a reaper without descriptors
    // cannot find what to kill, an idle-priority init never runs. Only the caller itself
    // (pid / who 0) may be changed; reading another's limits stays allowed.
    {SCMP_SYS(prlimit64), EPERM, ArgNot(0, 0), ArgNot(2, 0)},
    {SCMP_SYS(setpriority), EPERM, ArgNot(1, 0)},
    {SCMP_SYS(setpriority), EPERM, ArgIs(0, kPrioUser)},
    {SCMP_SYS(ioprio_set), EPERM, ArgNot(1, 0)},
    {SCMP_SYS(ioprio_set), EPERM, ArgIs(0, kIoprioWhoUser)},
    {SCMP_SYS(sched_setscheduler), EPERM, ArgNot(0, 0)},
    {SCMP_SYS(sched_setparam), EPERM, ArgNot(0, 0)},
    {SCMP_SYS(sched_setattr), EPERM, ArgNot(0, 0)},
    {SCMP_SYS(sched_setaffinity), EPERM, ArgNot(0, 0)},
};

using FilterContext = std::unique_ptr<void, decltype(&seccomp_release)>;

std::string SyscallName(int nr) {
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  if (name == nullptr) return absl::StrCat("syscall ", nr);
  std::string result(name);
  free(name);
  return result;
}

absl::Status SeccompError(absl::string_view what, int rc) {
  return absl::InternalError(absl::StrCat("seccomp baseline: ", what, " failed: ", strerror(-rc),
                                          "; is libseccomp >= 2.5 installed (libseccomp-dev)?"));
}

}  // namespace

absl::StatusOr<UniqueFd> ExportSeccompBaseline(SetIdRule set_id) {
  FilterContext ctx(seccomp_init(SCMP_ACT_ALLOW), &seccomp_release);
  if (ctx == nullptr) {
    return absl::InternalError("seccomp baseline: seccomp_init failed");
  }
  if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
    return absl::FailedPreconditionError(
        "seccomp baseline: libseccomp's native arch is not x86_64");
  }

  // The rules exist for x86_64 only, so another ABI must not get past them.
  // i386 calls (int 0x80) carry another audit arch: the bad-arch action. x32
  // calls carry the x86_64 arch with bit 30 set in the number; libseccomp
  // (2.5.4 checked) sends nr >= 0x40000000, bar -1, to the bad-arch action
  // when x32 is not in the filter. Killing, not ERRNO: 32-bit binaries cannot
  // run, and the compat syscall surface stays closed.
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
    const uint32_t action =
        rule.set_id && set_id == SetIdRule::kNotify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(rule.error);
    const int rc =
        seccomp_rule_add_exact_array(ctx.get(), action, rule.syscall, count, comparisons);
    if (rc != 0) {
      return SeccompError(absl::StrCat("adding the rule for ", SyscallName(rule.syscall)), rc);
    }
  }

  UniqueFd fd(memfd_create("ccsandbox-seccomp-baseline", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) {
    return absl::InternalError(absl::StrCat("seccomp baseline: memfd_create: ", strerror(errno)));
  }
  if (int rc = seccomp_export_bpf(ctx.get(), fd.get()); rc != 0) {
    return SeccompError("seccomp_export_bpf", rc);
  }
  // Sealed: no holder of the fd, nor of a /proc/self/fd reopen, rewrites it.
  if (fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    return absl::InternalError(
        absl::StrCat("seccomp baseline: sealing the memfd: ", strerror(errno)));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    return absl::InternalError(absl::StrCat("seccomp baseline: fstat: ", strerror(errno)));
  }
  if (st.st_size == 0 || st.st_size % sizeof(sock_filter) != 0) {
    return absl::InternalError(
        absl::StrCat("seccomp baseline: exported program has a bad size: ", st.st_size, " bytes"));
  }
  if (lseek(fd.get(), 0, SEEK_SET) != 0) {
    return absl::InternalError(absl::StrCat("seccomp baseline: lseek: ", strerror(errno)));
  }
  return fd;
}

absl::StatusOr<std::string> SeccompBaselineProgram(SetIdRule set_id) {
  absl::StatusOr<UniqueFd> fd = ExportSeccompBaseline(set_id);
  if (!fd.ok()) return fd.status();
  std::string program;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd->get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::InternalError(absl::StrCat("seccomp baseline: read: ", strerror(errno)));
    }
    if (n == 0) break;
    program.append(buf, n);
  }
  return program;
}

absl::StatusOr<UniqueFd> SealedProgramFd(const std::string& program) {
  if (program.empty() || program.size() % sizeof(sock_filter) != 0) {
    return absl::InvalidArgumentError("seccomp program: bad size");
  }
  UniqueFd fd(memfd_create("ccsandbox-seccomp-baseline", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) {
    return absl::InternalError(absl::StrCat("seccomp program: memfd_create: ", strerror(errno)));
  }
  if (pwrite(fd.get(), program.data(), program.size(), 0) != static_cast<ssize_t>(program.size())) {
    return absl::InternalError(absl::StrCat("seccomp program: write: ", strerror(errno)));
  }
  if (fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    return absl::InternalError(absl::StrCat("seccomp program: sealing: ", strerror(errno)));
  }
  return fd;
}

}  // namespace ccsandbox::launcher
