#include "broker/cli_signals.h"

#include <signal.h>
#include <unistd.h>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

// Each test runs in a process of its own (threadsafe death tests re-execute the binary), so
// BlockCliStopSignals is called once per process, before any other thread.
class CliSignalsTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(CliSignalsTest, ASignalDuringTheScopeCancelsAndIsReported) {
  EXPECT_EXIT(
      {
        BlockCliStopSignals();
        absl::Notification cancelled;
        int seen = 0;
        {
          CancelOnStopSignal scope([&cancelled] {
            if (!cancelled.HasBeenNotified()) cancelled.Notify();
          });
          kill(getpid(), SIGTERM);
          cancelled.WaitForNotification();
          seen = scope.signal();
        }
        _exit(seen == SIGTERM ? 42 : 1);
      },
      ::testing::ExitedWithCode(42), "");
}

TEST_F(CliSignalsTest, OutsideAScopeTheSignalEndsTheProcessAsItsDefault) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    EXPECT_EXIT(
        {
          BlockCliStopSignals();
          {
            CancelOnStopSignal scope([] {});
          }  // over: no longer cancels
          kill(getpid(), sig);
          while (true) pause();
        },
        ::testing::KilledBySignal(sig), "")
        << sig;
  }
}

TEST_F(CliSignalsTest, NoSignalMeansZero) {
  EXPECT_EXIT(
      {
        BlockCliStopSignals();
        CancelOnStopSignal scope([] {});
        _exit(scope.signal() == 0 ? 42 : 1);
      },
      ::testing::ExitedWithCode(42), "");
}

}  // namespace
}  // namespace ccsandbox::broker
