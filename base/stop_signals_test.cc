#include "base/stop_signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "gtest/gtest.h"

namespace ccsandbox {
namespace {

bool BlockedHere(int sig) {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, sig) == 1;
}

TEST(StopSignals, BlockedForLaterThreadsAndTakenByTheWaiter) {
  BlockStopSignals();
  EXPECT_TRUE(BlockedHere(SIGINT));
  EXPECT_TRUE(BlockedHere(SIGTERM));
  EXPECT_FALSE(BlockedHere(SIGPIPE));
  struct sigaction pipe_action = {};
  ASSERT_EQ(sigaction(SIGPIPE, nullptr, &pipe_action), 0);
  EXPECT_EQ(pipe_action.sa_handler, SIG_IGN);

  // A thread started afterwards inherits the mask, so only the waiter takes the signal.
  std::promise<bool> later_blocked;
  std::thread([&] { later_blocked.set_value(BlockedHere(SIGINT) && BlockedHere(SIGTERM)); }).join();
  EXPECT_TRUE(later_blocked.get_future().get());

  for (int sig : {SIGTERM, SIGINT}) {
    std::future<int> taken = std::async(std::launch::async, WaitForStopSignal);
    ASSERT_EQ(kill(getpid(), sig), 0);  // pending for the process until the waiter takes it
    EXPECT_EQ(taken.get(), sig);
  }
}

}  // namespace
}  // namespace ccsandbox
