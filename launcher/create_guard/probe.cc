#include "launcher/create_guard/probe.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "launcher/create_guard/landlock.h"

namespace ccsandbox::launcher {
namespace {

// 0 when the kernel accepts our filter flags; else the errno of seccomp(). Runs
// in a child: a filter cannot be removed from the process that installs it.
int TryListenerFlags() {
  const pid_t child = fork();
  if (child < 0) return errno;
  if (child == 0) {
    sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    sock_fprog prog{1, &allow};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(errno & 0xff);
    long fd =
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
    _exit(fd < 0 ? (errno & 0xff) : 0);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) return ECHILD;
  return WEXITSTATUS(status);
}

}  // namespace

std::string SeccompListenerMissing() {
  const int error = TryListenerFlags();
  if (error == 0) return "";
  return error == EINVAL
             ? "seccomp: the kernel lacks "
               "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV "
               "(needs Linux 5.19+)"
             : absl::StrCat("seccomp: cannot install a listener filter: ", strerror(error));
}

CreateGuardSupport ProbeCreateGuard() {
  CreateGuardSupport support;
  absl::StatusOr<int> abi = LandlockAbi();
  if (!abi.ok()) {
    support.reason = std::string(abi.status().message());
    return support;
  }
  support.landlock_abi = *abi;
  if (std::string missing = SeccompListenerMissing(); !missing.empty()) {
    support.reason = std::move(missing);
    return support;
  }
  // Entering the sandbox's mount namespace and root, and acting as its user,
  // need root.
  if (geteuid() != 0) {
    support.reason =
        "the launcher does not run as root (needs CAP_SYS_ADMIN, "
        "CAP_SYS_CHROOT, "
        "CAP_SYS_PTRACE, CAP_SETUID and CAP_SETGID to act for the sandbox)";
    return support;
  }
  support.available = true;
  support.reason = absl::StrCat("enforced at creation time (Landlock ABI ", *abi,
                                ", seccomp user notification)");
  return support;
}

}  // namespace ccsandbox::launcher
