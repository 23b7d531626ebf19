// Whether this host can enforce the filename-pattern denies at creation time
// (Landlock, seccomp user notification with ADDFD_FLAG_SEND and
// WAIT_KILLABLE_RECV, a root launcher), for the boot line and for refusing,
// exactly as before, the Linux runs that need them where it cannot.
//
//   CreateGuardSupport support = ProbeCreateGuard();
//   spdlog::info("filename-pattern denies: {}", support.reason);
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_PROBE_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_PROBE_H_

#include <string>

namespace ccsandbox::launcher {

struct CreateGuardSupport {
  bool available = false;
  int landlock_abi = 0;  // 0: none
  // "enforced at creation time (Landlock ABI 7, seccomp user notification)", or
  // what is missing and how to get it.
  std::string reason;
};

// Checks by trying: Landlock's ABI, and a throw-away child that installs a
// listener filter with SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (Linux 5.19+,
// which also has ADDFD_FLAG_SEND from 5.14). Costs one fork; call once at
// start-up.
CreateGuardSupport ProbeCreateGuard();

// The seccomp half of ProbeCreateGuard, for `sandboxctl doctor` too: "" when a throw-away
// child could install a listener filter with SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, else
// what is missing. Needs no privilege. Costs one fork.
std::string SeccompListenerMissing();

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_PROBE_H_
