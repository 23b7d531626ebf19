#include "tests/poll_until.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace ccsandbox::testing {

::testing::AssertionResult PollUntil(absl::FunctionRef<bool()> done, absl::Duration timeout,
                                     absl::string_view what) {
  const absl::Time deadline = absl::Now() + timeout;
  // Short first intervals (most waits end within milliseconds), at most 50 ms later on.
  absl::Duration interval = absl::Milliseconds(1);
  while (!done()) {
    const absl::Time now = absl::Now();
    if (now >= deadline) {
      return done() ? ::testing::AssertionSuccess()
                    : ::testing::AssertionFailure()
                          << "timed out after " << absl::FormatDuration(timeout) << " waiting for "
                          << what;
    }
    absl::SleepFor(std::min(interval, deadline - now));
    interval = std::min(interval * 2, absl::Milliseconds(50));
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ccsandbox::testing
