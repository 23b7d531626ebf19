// Test support: a test that needs something a host may lack (an IPv6 loopback, curl, IA32
// emulation) skips where it is missing — except under CI (CI=true in the test's environment),
// whose machine must have all of it: there the skip is a failure, so a suite never reports
// PASSED in CI having skipped its point.
//
//   if (!echo6.ok()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no IPv6 loopback here");
//
// Only for missing host support: an error of the code under test is asserted, never skipped.
// Bazel hands CI to a test only when told to (--test_env=CI).
#ifndef CCSANDBOX_TESTS_SKIP_OR_FAIL_IN_CI_H_
#define CCSANDBOX_TESTS_SKIP_OR_FAIL_IN_CI_H_

#include <stdlib.h>
#include <string.h>

#include "gtest/gtest.h"

namespace ccsandbox::testing {

// True when the environment's CI is set to anything but "", "0" or "false".
inline bool InCi() {
  const char* ci = getenv("CI");
  return ci != nullptr && strcmp(ci, "") != 0 && strcmp(ci, "0") != 0 && strcmp(ci, "false") != 0;
}

}  // namespace ccsandbox::testing

// Skips the current test with `reason`, or under CI fails it; either way returns from the
// calling function (a test body or SetUp), as GTEST_SKIP / GTEST_FAIL do.
#define CCSANDBOX_SKIP_OR_FAIL_IN_CI(reason)                                  \
  do {                                                                        \
    if (::ccsandbox::testing::InCi()) {                                       \
      GTEST_FAIL() << "CI must have what this test needs, yet: " << (reason); \
    } else {                                                                  \
      GTEST_SKIP() << (reason);                                               \
    }                                                                         \
  } while (false)

#endif  // CCSANDBOX_TESTS_SKIP_OR_FAIL_IN_CI_H_
