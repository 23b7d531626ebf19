// Test support: waiting for what only polling can observe — a process in /proc, a line in a
// daemon's log, a counter kept by another thread — with a deadline that fails the test and says
// what never happened. Where the event itself can be waited on (a stream's event, a pidfd, a
// pipe, a Mutex condition), wait on that instead.
//
//   EXPECT_TRUE(PollUntil([&] { return AnyProcessMatches(marker); }, absl::Seconds(30),
//                         "the sandboxed command to start"));
#ifndef CCSANDBOX_TESTS_POLL_UNTIL_H_
#define CCSANDBOX_TESTS_POLL_UNTIL_H_

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ccsandbox::testing {

// Calls `done` until it returns true (success), checking once more at the deadline; after
// `timeout` a failure "timed out after <timeout> waiting for <what>".
::testing::AssertionResult PollUntil(absl::FunctionRef<bool()> done, absl::Duration timeout,
                                     absl::string_view what);

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_POLL_UNTIL_H_
