#include "launcher/run_control.h"

#include <sys/eventfd.h>

#include "absl/status/status.h"

namespace ccsandbox::launcher {

absl::StatusOr<std::unique_ptr<RunControl>> RunControl::Create() {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return absl::InternalError("eventfd failed");
  auto control = std::unique_ptr<RunControl>(new RunControl());
  control->wake_.Reset(fd);
  return control;
}

void RunControl::RequestSignal(int signal, KillCause cause) {
  absl::MutexLock lock(&mu_);
  pending_ = SignalRequest{signal, std::move(cause)};
  const uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof(one));
}

std::optional<RunControl::SignalRequest> RunControl::TakeRequest() {
  absl::MutexLock lock(&mu_);
  uint64_t count;
  (void)!read(wake_.get(), &count, sizeof(count));
  return std::exchange(pending_, std::nullopt);
}

}  // namespace ccsandbox::launcher
