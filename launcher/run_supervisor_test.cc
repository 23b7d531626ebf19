// Supervise against a receiver that keeps up, one that is slow, and one that takes nothing:
// back-pressure instead of buffering, and the kill path never waiting on the receiver.
#include "launcher/run_supervisor.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "launcher/sandbox_process.h"
#include "launcher/sh_process_spec.h"

namespace ccsandbox::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// Takes output only while it has credit; Grant() adds credit and wakes the supervisor, as the
// gRPC sink's outbox does when its receiver has read.
class PacedSink : public EventSink {
 public:
  explicit PacedSink(size_t credit) : credit_(credit), wake_(eventfd(0, EFD_NONBLOCK)) {}

  bool Emit(const v1::SandboxEvent& e) override {
    absl::MutexLock lock(&mu_);
    if (e.has_stdout()) {
      bytes_ += e.stdout().size();
      credit_ = credit_ > e.stdout().size() ? credit_ - e.stdout().size() : 0;
    }
    if (e.has_exit()) exit_code_ = e.exit().exit_code();
    if (e.has_killed()) killed_ = e.killed().reason() + ": " + e.killed().detail();
    return true;
  }
  bool Cancelled() override { return false; }
  bool Ready() override {
    uint64_t count;
    (void)!read(wake_.get(), &count, sizeof(count));
    absl::MutexLock lock(&mu_);
    ++ready_calls_;
    return credit_ > 0;
  }
  int ready_fd() override { return wake_.get(); }

  void Grant(size_t bytes) {
    {
      absl::MutexLock lock(&mu_);
      credit_ += bytes;
    }
    const uint64_t one = 1;
    (void)!write(wake_.get(), &one, sizeof(one));
  }
  size_t bytes() {
    absl::MutexLock lock(&mu_);
    return bytes_;
  }
  // Waits until the receiver has taken all its credit (so it is full), at most `timeout`.
  bool AwaitFull(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(this, &PacedSink::Full), timeout);
  }
  int exit_code() {
    absl::MutexLock lock(&mu_);
    return exit_code_;
  }
  std::string killed() {
    absl::MutexLock lock(&mu_);
    return killed_;
  }

 private:
  bool Full() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return bytes_ > 0 && credit_ == 0; }

  absl::Mutex mu_;
  size_t credit_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int exit_code_ ABSL_GUARDED_BY(mu_) = -1;
  std::string killed_ ABSL_GUARDED_BY(mu_);
  int ready_calls_ ABSL_GUARDED_BY(mu_) = 0;
  UniqueFd wake_;
};

RunOutcome SuperviseToEnd(const ProcessSpec& spec, const SuperviseOptions& options, EventSink& sink,
                          std::function<void(RunControl&)> during = nullptr) {
  auto process = SandboxProcess::Spawn(spec);
  EXPECT_TRUE(process.ok()) << process.status();
  auto control = RunControl::Create();
  std::thread t;
  if (during) t = std::thread([&] { during(**control); });
  const RunOutcome outcome = Supervise(**process, **control, options, sink);
  if (t.joinable()) t.join();
  return outcome;
}

TEST(Supervise, AReceiverThatTakesNothingGetsNoOutputAndTheTimeoutStillKills) {
  PacedSink sink(/*credit=*/0);
  SuperviseOptions options;
  options.timeout = std::chrono::milliseconds(300);
  const auto start = Clock::now();
  EXPECT_EQ(SuperviseToEnd(Sh("exec yes"), options, sink), RunOutcome::kKilled);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(sink.bytes(), 0u);  // nothing was read, so nothing piled up
  EXPECT_EQ(sink.killed(), "timeout: timeout after 300 ms");
}

TEST(Supervise, ASignalRequestActsWhileTheReceiverIsFull) {
  PacedSink sink(/*credit=*/64 * 1024);
  SuperviseOptions options;
  const RunOutcome outcome =
      SuperviseToEnd(Sh("exec yes"), options, sink, [&](RunControl& control) {
        // Once the receiver is full (or after 30 s, so the run ends either way).
        EXPECT_TRUE(sink.AwaitFull(absl::Seconds(30)));
        control.RequestSignal(SIGKILL, {"stopped", "operator stop"});
      });
  EXPECT_EQ(outcome, RunOutcome::kKilled);
  EXPECT_EQ(sink.killed(), "stopped: operator stop");
  EXPECT_LT(sink.bytes(), 64u * 1024 + 64 * 1024 + 1);  // the credit, plus at most one read
}

TEST(Supervise, ASlowReceiverGetsEveryByteOfACommandThatExited) {
  // The command exits with its last bytes still in the pipe; the receiver takes them slower
  // than the drain limit, which pauses while it takes nothing.
  PacedSink sink(/*credit=*/16 * 1024);
  SuperviseOptions options;
  options.drain_limit = std::chrono::milliseconds(100);
  std::atomic<bool> done{false};
  std::thread granter([&] {
    while (!done) {
      // Not synchronisation: the pause is the slow receiver under test.
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      sink.Grant(16 * 1024);
    }
  });
  EXPECT_EQ(SuperviseToEnd(Sh("head -c 600000 /dev/zero"), options, sink), RunOutcome::kExited);
  done = true;
  granter.join();
  EXPECT_EQ(sink.bytes(), 600000u);
  EXPECT_EQ(sink.exit_code(), 0);
}

TEST(Supervise, AfterExitAReceiverThatTakesNothingLosesTheRestAfterTheStallLimit) {
  PacedSink sink(/*credit=*/0);
  SuperviseOptions options;
  options.stall_limit = std::chrono::milliseconds(300);
  const auto start = Clock::now();
  EXPECT_EQ(SuperviseToEnd(Sh("echo unread"), options, sink), RunOutcome::kExited);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(300));
  EXPECT_EQ(sink.bytes(), 0u);
  EXPECT_EQ(sink.exit_code(), 0);
}

}  // namespace
}  // namespace ccsandbox::launcher
