// Test support: finding a sanitizer's report in a program's output. Under --config=asan-ubsan the
// end-to-end tests run daemons of the same build, sanitized too, whose stderr goes to a log file
// no one reads: the fixture looks there (and in sandboxctl's stderr) so that a report fails the
// test instead of passing unseen.
#ifndef CCSANDBOX_TESTS_SANITIZER_REPORT_H_
#define CCSANDBOX_TESTS_SANITIZER_REPORT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ccsandbox::testing {

// `output` from the first line of an AddressSanitizer, LeakSanitizer or UndefinedBehaviorSanitizer
// report on (at most 16 KiB of it), or "" when it holds none.
std::string SanitizerReport(absl::string_view output);

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_SANITIZER_REPORT_H_
