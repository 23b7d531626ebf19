#include "base/event_outbox.h"

#include <atomic>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ccsandbox {
namespace {

v1::SandboxEvent Output(size_t bytes, char fill = 'x') {
  v1::SandboxEvent event;
  event.set_stdout(std::string(bytes, fill));
  return event;
}

v1::SandboxEvent Exit(int code) {
  v1::SandboxEvent event;
  event.mutable_exit()->set_exit_code(code);
  return event;
}

// A stream whose receiver reads only while `open` is set; Cancel() makes a blocked write fail
// the way a cancelled gRPC call does.
class FakeStream {
 public:
  bool Write(const v1::SandboxEvent& event) {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](FakeStream* s)
             ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) { return s->open_ || s->cancelled_; },
        this));
    if (cancelled_) return false;
    events_.push_back(event);
    return true;
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  void Cancel() {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
  }
  std::vector<v1::SandboxEvent> events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<v1::SandboxEvent> events_ ABSL_GUARDED_BY(mu_);
};

EventOutbox::WriteFn WriteTo(FakeStream& stream) {
  return [&stream](const v1::SandboxEvent& e) { return stream.Write(e); };
}

TEST(EventOutbox, WritesEverythingInOrder) {
  FakeStream stream;
  stream.Open();
  EventOutbox outbox({}, WriteTo(stream));
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(outbox.Push(Output(10, static_cast<char>('a' + i % 26))));
  ASSERT_TRUE(outbox.Push(Exit(3)));
  EXPECT_EQ(outbox.Finish(absl::Seconds(10), nullptr), EventOutbox::kDrained);
  std::vector<v1::SandboxEvent> events = stream.events();
  ASSERT_EQ(events.size(), 101u);
  EXPECT_EQ(events[25].stdout(), std::string(10, 'z'));
  EXPECT_EQ(events.back().exit().exit_code(), 3);
  EXPECT_FALSE(outbox.Push(Exit(4)));  // finished: nothing more is taken
}

TEST(EventOutbox, AFullOutboxHasNoRoomUntilTheReceiverTakesHalfOfIt) {
  FakeStream stream;
  absl::Notification room;
  EventOutbox outbox({.capacity_bytes = 64 * 1024}, WriteTo(stream), [&] { room.Notify(); });
  int queued = 0;
  while (outbox.TryPush(Output(4096))) ++queued;
  // The writer holds one event in its blocked write; the rest is bounded by the capacity.
  EXPECT_GE(queued, 14);
  EXPECT_LE(queued, 16);
  EXPECT_GE(outbox.queued_bytes(), 64u * 1024);
  EXPECT_LT(outbox.queued_bytes(), 64u * 1024 + 4096 + 512);
  EXPECT_FALSE(outbox.HasRoom());
  // Events that must not be lost are taken anyway.
  EXPECT_TRUE(outbox.Push(Exit(0)));
  EXPECT_FALSE(room.HasBeenNotified());
  stream.Open();
  room.WaitForNotification();
  EXPECT_TRUE(outbox.HasRoom());
  EXPECT_EQ(outbox.Finish(absl::Seconds(10), nullptr), EventOutbox::kDrained);
  EXPECT_EQ(stream.events().size(), static_cast<size_t>(queued + 1));
}

TEST(EventOutbox, AReceiverThatTakesNothingIsReportedAsStalled) {
  FakeStream stream;
  EventOutbox outbox({}, WriteTo(stream));
  ASSERT_TRUE(outbox.Push(Output(100)));
  ASSERT_TRUE(outbox.Push(Exit(0)));
  const absl::Time start = absl::Now();
  EXPECT_EQ(outbox.Finish(absl::Milliseconds(300), nullptr), EventOutbox::kStalled);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_EQ(outbox.Finish(absl::Seconds(10), nullptr), EventOutbox::kStalled);  // remembered
  stream.Cancel();  // what the owner does next; the destructor then joins at once
}

TEST(EventOutbox, AnIdleStreamIsNotAStalledOne) {
  // The stall clock runs only while a write is blocked, not while nothing was queued.
  FakeStream stream;
  stream.Open();
  EventOutbox outbox({}, WriteTo(stream));
  // Not synchronisation: this idle time, longer than the stall limit below, is what is tested.
  absl::SleepFor(absl::Milliseconds(150));
  ASSERT_TRUE(outbox.Push(Exit(0)));
  EXPECT_EQ(outbox.Finish(absl::Milliseconds(100), nullptr), EventOutbox::kDrained);
}

TEST(EventOutbox, CancelledEndsTheWaitAndTheRestIsDropped) {
  FakeStream stream;
  EventOutbox outbox({}, WriteTo(stream));
  ASSERT_TRUE(outbox.Push(Output(10)));
  ASSERT_TRUE(outbox.Push(Exit(0)));
  std::atomic<int> polls{0};
  EXPECT_EQ(outbox.Finish(absl::Seconds(60), [&] { return ++polls >= 3; }),
            EventOutbox::kCancelled);
  stream.Cancel();
}

TEST(EventOutbox, AFailedWriteDropsEverythingAndNeverBlocksAProducer) {
  FakeStream stream;
  stream.Cancel();
  absl::Notification room;
  EventOutbox outbox({.capacity_bytes = 4096}, WriteTo(stream), [&] { room.Notify(); });
  while (outbox.TryPush(Output(1000))) {
  }
  room.WaitForNotification();  // the failure frees the producer that waited for room
  EXPECT_TRUE(outbox.failed());
  EXPECT_TRUE(outbox.HasRoom());
  EXPECT_FALSE(outbox.Push(Exit(0)));
  EXPECT_FALSE(outbox.PushWhenRoom(Output(10)));  // returns at once
  EXPECT_EQ(outbox.queued_bytes(), 0u);
  EXPECT_EQ(outbox.Finish(absl::Seconds(10), nullptr), EventOutbox::kFailed);
}

TEST(EventOutbox, PushWhenRoomWaitsForTheReceiverOrForRelease) {
  FakeStream stream;
  EventOutbox outbox({.capacity_bytes = 8192}, WriteTo(stream));
  while (outbox.TryPush(Output(1000))) {
  }
  absl::Notification pushed;
  std::thread producer([&] {
    outbox.PushWhenRoom(Output(1, 'v'));
    pushed.Notify();
  });
  EXPECT_FALSE(pushed.WaitForNotificationWithTimeout(absl::Milliseconds(200)));
  outbox.Release();
  pushed.WaitForNotification();
  producer.join();
  stream.Open();
  EXPECT_EQ(outbox.Finish(absl::Seconds(10), nullptr), EventOutbox::kDrained);
  EXPECT_EQ(stream.events().back().stdout(), "v");
}

}  // namespace
}  // namespace ccsandbox
