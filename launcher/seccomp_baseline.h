// The seccomp baseline every sandbox runs under, handed to bwrap as
// `--seccomp FD`: allow by default, deny what reaches kernel attack surface or
// escapes the mount view. Owns the rule table (seccomp_baseline.cc, each rule
// with the threat it stops) and its export to classic BPF.
//
//   absl::StatusOr<UniqueFd> bpf = ExportSeccompBaseline();  // one per run
//   // in the child, before exec: clear FD_CLOEXEC (or dup2 to a free number)
//   // bwrap ... --seccomp <that number> -- cmd
//
// The fd is a sealed memfd at offset 0. bwrap reads it to EOF, and every dup
// shares that offset: export a fresh fd for each bwrap run. A reused fd makes
// bwrap fail, never run unfiltered.
//
// Denied with EPERM: io_uring_*, ptrace, process_vm_readv/writev, kexec_*,
// bpf, perf_event_open, userfaultfd, the keyring calls, ioctl TIOCSTI and
// TIOCLINUX, the mount family (mount_setattr included), module loading,
// swapon/swapoff, reboot, open_by_handle_at, and clone/unshare with
// CLONE_NEWUSER. Also denied with EPERM: any mode carrying S_ISUID or S_ISGID
// given to chmod, fchmod, fchmodat, fchmodat2 (by number, 452), creat,
// mknod/mknodat, or open/openat with O_CREAT or O_TMPFILE — no set-id file
// is left in a writable bind; mkdir needs no rule, the kernel drops both
// bits. clone3 and openat2 fail with ENOSYS (their flags and mode sit behind
// a pointer), so glibc falls back to clone and callers to openat, whose
// arguments the filter can see. A syscall made through another ABI (i386
// `int 0x80`, x32) kills the process.
//
// ERRNO outranks USER_NOTIF across stacked filters: a call denied here never
// reaches the create guard's supervisor (create_guard/filter.h). So a run with the
// create guard gets the set-id rules as USER_NOTIF (SetIdRule::kNotify): the
// guard's filter traps the same calls and its supervisor answers EPERM and
// reports a violation (when several filters notify, the newest — the guard's —
// gets the call). Should a call get past the guard's filter, this filter's
// notification finds no listener and the call fails with ENOSYS: never a
// set-id bit either way.
#ifndef CCSANDBOX_LAUNCHER_SECCOMP_BASELINE_H_
#define CCSANDBOX_LAUNCHER_SECCOMP_BASELINE_H_

#include <string>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher {

// What the set-id rules do.
enum class SetIdRule {
  kRefuse,  // EPERM: a run without the create guard
  kNotify,  // USER_NOTIF: a run whose create guard's supervisor answers (and reports) them
};

// Compiles the baseline with libseccomp; returns the program (an array of
// `struct sock_filter`) in a sealed, close-on-exec memfd at offset 0.
absl::StatusOr<UniqueFd> ExportSeccompBaseline(SetIdRule set_id = SetIdRule::kRefuse);

// The same program's bytes, compiled once (the launcher does it at start-up and refuses
// to start without it), and a fresh sealed memfd holding them for each bwrap run.
absl::StatusOr<std::string> SeccompBaselineProgram(SetIdRule set_id = SetIdRule::kRefuse);
absl::StatusOr<UniqueFd> SealedProgramFd(const std::string& program);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SECCOMP_BASELINE_H_
