#include "tests/poll_until.h"

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace ccsandbox::testing {
namespace {

TEST(PollUntil, SucceedsOnceThePredicateHolds) {
  int calls = 0;
  EXPECT_TRUE(PollUntil([&] { return ++calls == 3; }, absl::Seconds(10), "the third call"));
  EXPECT_EQ(calls, 3);
}

TEST(PollUntil, SeesAChangeMadeByAnotherThread) {
  std::atomic<bool> flag{false};
  std::thread setter([&] { flag = true; });
  EXPECT_TRUE(PollUntil([&] { return flag.load(); }, absl::Seconds(10), "the flag"));
  setter.join();
}

TEST(PollUntil, FailsAfterTheDeadlineNamingWhatItWaitedFor) {
  const absl::Time start = absl::Now();
  ::testing::AssertionResult result =
      PollUntil([] { return false; }, absl::Milliseconds(100), "the impossible");
  EXPECT_FALSE(result);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(100));
  EXPECT_TRUE(
      absl::StrContains(result.message(), "timed out after 100ms waiting for the impossible"))
      << result.message();
}

}  // namespace
}  // namespace ccsandbox::testing
