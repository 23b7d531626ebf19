// A terminal's events from other threads (its create guard's violations), queued for the one
// thread that writes its stream: Emit never waits on the client, the relay takes them when
// wake_fd() turns readable.
//
//   TerminalEventQueue events;
//   StartCreateGuard(plan, id, channel, events);
//   relay.Run(output, {events.wake_fd(), [&] { for (auto& e : events.Take()) write(e); }});
#ifndef CCSANDBOX_LAUNCHER_TERMINAL_EVENT_QUEUE_H_
#define CCSANDBOX_LAUNCHER_TERMINAL_EVENT_QUEUE_H_

#include <atomic>
#include <deque>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/unique_fd.h"
#include "launcher/run_supervisor.h"

namespace ccsandbox::launcher {

class TerminalEventQueue : public EventSink {
 public:
  // Events beyond this wait nowhere: they are counted and dropped (a storm of denials).
  static constexpr size_t kMaxQueued = 1024;

  TerminalEventQueue();
  bool Emit(const v1::SandboxEvent& event) override;
  bool Cancelled() override { return cancelled_.load(); }
  void Cancel() { cancelled_.store(true); }

  int wake_fd() const { return wake_.get(); }
  // Everything queued so far (clears wake_fd), and how many were dropped since the last take.
  std::vector<v1::SandboxEvent> Take(size_t* dropped = nullptr);

 private:
  UniqueFd wake_;  // eventfd
  std::atomic<bool> cancelled_{false};
  absl::Mutex mu_;
  std::deque<v1::SandboxEvent> queued_ ABSL_GUARDED_BY(mu_);
  size_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_TERMINAL_EVENT_QUEUE_H_
