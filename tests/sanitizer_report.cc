#include "tests/sanitizer_report.h"

#include <algorithm>

namespace ccsandbox::testing {
namespace {

// How each report begins: ASan's and LSan's "==PID==ERROR: ...", UBSan's
// "FILE:LINE:COL: runtime error: ...", and a fatal signal caught by either runtime.
constexpr absl::string_view kMarkers[] = {
    "ERROR: AddressSanitizer", "ERROR: LeakSanitizer",   "ERROR: UndefinedBehaviorSanitizer",
    ": runtime error: ",       "Sanitizer:DEADLYSIGNAL",
};
constexpr size_t kMaxReport = 16 * 1024;

}  // namespace

std::string SanitizerReport(absl::string_view output) {
  size_t first = absl::string_view::npos;
  for (absl::string_view marker : kMarkers) first = std::min(first, output.find(marker));
  if (first == absl::string_view::npos) return "";
  const size_t line = output.rfind('\n', first);
  const size_t begin = line == absl::string_view::npos ? 0 : line + 1;
  return std::string(output.substr(begin, kMaxReport));
}

}  // namespace ccsandbox::testing
