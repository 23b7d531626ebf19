#include "launcher/terminal/event_queue.h"

#include <sys/eventfd.h>
#include <unistd.h>

namespace ccsandbox::launcher {

TerminalEventQueue::TerminalEventQueue() : wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

bool TerminalEventQueue::Emit(const v1::SandboxEvent& event) {
  if (cancelled_.load()) return false;
  {
    absl::MutexLock lock(&mu_);
    if (queued_.size() >= kMaxQueued) {
      ++dropped_;
      return true;
    }
    queued_.push_back(event);
  }
  const uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof(one));
  return true;
}

std::vector<v1::SandboxEvent> TerminalEventQueue::Take(size_t* dropped) {
  uint64_t count;
  (void)!read(wake_.get(), &count, sizeof(count));
  absl::MutexLock lock(&mu_);
  std::vector<v1::SandboxEvent> taken(queued_.begin(), queued_.end());
  queued_.clear();
  if (dropped != nullptr) *dropped = dropped_;
  dropped_ = 0;
  return taken;
}

}  // namespace ccsandbox::launcher
