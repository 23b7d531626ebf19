#include "tests/process_exit.h"

#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "absl/time/clock.h"
#include "base/unique_fd.h"

namespace ccsandbox::testing {

bool ExitsWithin(pid_t pid, absl::Duration timeout) {
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd.valid()) return errno == ESRCH;  // already reaped
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    const absl::Duration left = std::max(deadline - absl::Now(), absl::ZeroDuration());
    pollfd fd{pidfd.get(), POLLIN, 0};
    const int ready = poll(&fd, 1, static_cast<int>(absl::ToInt64Milliseconds(left)));
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace ccsandbox::testing
