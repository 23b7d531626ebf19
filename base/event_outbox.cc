#include "base/event_outbox.h"

#include <utility>

namespace ccsandbox {
namespace {

// What an event costs beyond its serialized bytes (the message object, the queue node), so a
// flood of tiny events is bounded as well as a few large ones.
constexpr size_t kPerEventCost = 256;

}  // namespace

EventOutbox::EventOutbox(Options options, WriteFn write, std::function<void()> on_room)
    : options_(options),
      write_(std::move(write)),
      on_room_(std::move(on_room)),
      writer_([this] { Writer(); }) {}

EventOutbox::~EventOutbox() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  writer_.join();
}

bool EventOutbox::Room() const { return failed_ || bytes_ < options_.capacity_bytes; }

bool EventOutbox::Enqueue(v1::SandboxEvent event) {
  if (failed_ || closed_) return false;
  const size_t cost = event.ByteSizeLong() + kPerEventCost;
  bytes_ += cost;
  queue_.push_back(Item{std::move(event), cost});
  return true;
}

bool EventOutbox::Push(v1::SandboxEvent event) {
  absl::MutexLock lock(&mu_);
  return Enqueue(std::move(event));
}

bool EventOutbox::TryPush(v1::SandboxEvent event) {
  absl::MutexLock lock(&mu_);
  if (!Room()) {
    armed_ = true;
    return false;
  }
  return Enqueue(std::move(event));
}

bool EventOutbox::PushWhenRoom(v1::SandboxEvent event) {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](EventOutbox* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
        return self->Room() || self->released_ || self->closed_;
      },
      this));
  return Enqueue(std::move(event));
}

bool EventOutbox::HasRoom() {
  absl::MutexLock lock(&mu_);
  if (Room()) return true;
  armed_ = true;
  return false;
}

void EventOutbox::Release() {
  absl::MutexLock lock(&mu_);
  released_ = true;
}

bool EventOutbox::failed() const {
  absl::MutexLock lock(&mu_);
  return failed_;
}

size_t EventOutbox::queued_bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

absl::Duration EventOutbox::blocked_for() const {
  absl::MutexLock lock(&mu_);
  return writing_ ? absl::Now() - write_started_ : absl::ZeroDuration();
}

uint64_t EventOutbox::written() const {
  absl::MutexLock lock(&mu_);
  return written_;
}

void EventOutbox::Writer() {
  for (;;) {
    Item item;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](EventOutbox* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return !self->queue_.empty() || self->closed_ || self->failed_ || self->abandon_;
          },
          this));
      if (failed_ || abandon_ || queue_.empty()) return;
      item = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
      write_started_ = absl::Now();
    }
    const bool ok = write_(item.event);
    bool wake = false;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      bytes_ -= item.cost;
      ++written_;
      if (!ok) {
        failed_ = true;
        queue_.clear();
        bytes_ = 0;
      }
      if (armed_ && (failed_ || bytes_ <= options_.capacity_bytes / 2)) {
        armed_ = false;
        wake = true;
      }
    }
    if (wake && on_room_) on_room_();
  }
}

EventOutbox::Drain EventOutbox::Finish(absl::Duration stall_limit,
                                       const std::function<bool()>& cancelled) {
  absl::MutexLock lock(&mu_);
  if (finished_) return drain_;
  closed_ = true;
  for (;;) {
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](EventOutbox* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
                               return self->failed_ || (self->queue_.empty() && !self->writing_);
                             },
                             this),
                         absl::Milliseconds(50));
    if (failed_) {
      drain_ = kFailed;
      break;
    }
    if (queue_.empty() && !writing_) {
      drain_ = kDrained;
      break;
    }
    if (writing_ && absl::Now() - write_started_ >= stall_limit) {
      drain_ = kStalled;
      break;
    }
    if (cancelled) {
      mu_.Unlock();
      const bool stop = cancelled();
      mu_.Lock();
      if (stop) {
        drain_ = kCancelled;
        break;
      }
    }
  }
  finished_ = true;
  if (drain_ != kDrained) abandon_ = true;  // the writer drops the rest once its write returns
  return drain_;
}

}  // namespace ccsandbox
