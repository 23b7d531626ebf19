// A bounded queue of SandboxEvents in front of one gRPC stream, and the one thread that writes
// them. A stream's Write blocks for as long as its receiver does not read; the outbox keeps that
// wait on its own thread, so whoever produces the events (a run's supervisor, the broker's relay)
// never waits on a receiver, and it bounds what a receiver that stops reading can cost:
//
//   - producers that can slow down ask for room first (HasRoom, TryPush, PushWhenRoom): a
//     supervisor then stops reading the command's pipes, so the command blocks on its own
//     output, and the queue never holds much more than `capacity_bytes`;
//   - the few events that must not be lost (a run's start and its last event) are queued
//     whatever the fill level (Push);
//   - blocked_for and Finish tell a receiver that takes nothing for a while from one that is
//     merely slow, so the owner can cancel the stream instead of holding it forever.
//
//   EventOutbox outbox({}, [writer](const v1::SandboxEvent& e) { return writer->Write(e); },
//                      [&] { wake the producer });
//   if (outbox.HasRoom()) { read output; outbox.Push(output); }   // else wait for on_room
//   outbox.Push(last);
//   if (outbox.Finish(stall, [&] { return context->IsCancelled(); }) != EventOutbox::kDrained)
//     context->TryCancel();   // makes the blocked Write return
//   // ~EventOutbox joins the writer thread
//
// Thread safety: every member may be called from any thread. `on_room` runs on the writer
// thread, with no lock of the outbox held.
#ifndef CCSANDBOX_BASE_EVENT_OUTBOX_H_
#define CCSANDBOX_BASE_EVENT_OUTBOX_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox {

class EventOutbox {
 public:
  // Writes one event to the stream; false once the stream is broken or cancelled.
  using WriteFn = std::function<bool(const v1::SandboxEvent&)>;

  struct Options {
    // Above this many queued bytes (serialized size plus a per-event allowance) the outbox
    // has no room; on_room fires once it has drained to half of it.
    size_t capacity_bytes = 512 * 1024;
  };

  enum Drain {
    kDrained,    // every event was written
    kFailed,     // a write failed: the receiver is gone
    kStalled,    // one write was blocked for the whole stall limit
    kCancelled,  // `cancelled` said so before the queue drained
  };

  // Starts the writer thread.
  EventOutbox(Options options, WriteFn write, std::function<void()> on_room = nullptr);
  // Stops taking events and joins the writer, which first writes what is queued: call Finish
  // (and cancel the stream when it did not drain) before, so no write is left blocked.
  ~EventOutbox();
  EventOutbox(const EventOutbox&) = delete;
  EventOutbox& operator=(const EventOutbox&) = delete;

  // Queues `event` whatever the fill level. False (dropped) once a write has failed or the
  // outbox was finished.
  bool Push(v1::SandboxEvent event);
  // Queues `event` while there is room; otherwise returns false and arms on_room.
  bool TryPush(v1::SandboxEvent event);
  // Waits until there is room (or Release), then queues as Push does.
  bool PushWhenRoom(v1::SandboxEvent event);
  // True while below capacity, and once a write has failed (what is pushed is then dropped:
  // nobody would read it). Otherwise false, and on_room runs once there is room again.
  bool HasRoom();
  // PushWhenRoom never waits again (its producer is ending).
  void Release();

  bool failed() const;
  size_t queued_bytes() const;
  uint64_t written() const;
  // How long the write in progress has been blocked (zero while none is): a receiver that takes
  // nothing at all, as opposed to a slow one.
  absl::Duration blocked_for() const;

  // No more events. Waits until every queued event is written (kDrained), a write fails, one
  // write has been blocked for `stall_limit`, or `cancelled` returns true (polled every 50 ms).
  // Returns at once when called again.
  Drain Finish(absl::Duration stall_limit, const std::function<bool()>& cancelled);

 private:
  struct Item {
    v1::SandboxEvent event;
    size_t cost;
  };

  bool Enqueue(v1::SandboxEvent event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Room() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Writer();

  const Options options_;
  const WriteFn write_;
  const std::function<void()> on_room_;

  mutable absl::Mutex mu_;
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;      // queued plus the one being written
  bool writing_ ABSL_GUARDED_BY(mu_) = false;  // a write is in progress
  absl::Time write_started_ ABSL_GUARDED_BY(mu_);
  bool armed_ ABSL_GUARDED_BY(mu_) = false;  // a producer waits for on_room
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;  // Finish was called: no more events
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  bool abandon_ ABSL_GUARDED_BY(mu_) = false;  // Finish gave up: drop what is queued
  uint64_t written_ ABSL_GUARDED_BY(mu_) = 0;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // Finish returned `drain_`
  Drain drain_ ABSL_GUARDED_BY(mu_) = kDrained;
  std::thread writer_;
};

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_EVENT_OUTBOX_H_
