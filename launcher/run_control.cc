#include "launcher/run_control.h"

#include <fcntl.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/eventfd.h>
#endif

#include "absl/status/status.h"

namespace ccsandbox::launcher {

absl::StatusOr<std::unique_ptr<RunControl>> RunControl::Create() {
  auto control = std::unique_ptr<RunControl>(new RunControl());
#if defined(__linux__)
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return absl::InternalError("eventfd failed");
  control->wake_.Reset(fd);
#else
  // No eventfd (macOS): a non-blocking pipe, read by TakeRequest until empty.
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError("pipe failed");
  control->wake_.Reset(fds[0]);
  control->wake_write_.Reset(fds[1]);
  for (int fd : fds) {
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
#endif
  return control;
}

void RunControl::RequestSignal(int signal, KillCause cause) {
  absl::MutexLock lock(&mu_);
  pending_ = SignalRequest{signal, std::move(cause)};
  const uint64_t one = 1;
  (void)!write(wake_write_.valid() ? wake_write_.get() : wake_.get(), &one, sizeof(one));
}

std::optional<RunControl::SignalRequest> RunControl::TakeRequest() {
  absl::MutexLock lock(&mu_);
  uint64_t count;
  while (read(wake_.get(), &count, sizeof(count)) > 0 && wake_write_.valid()) {
  }
  return std::exchange(pending_, std::nullopt);
}

}  // namespace ccsandbox::launcher
