// libFuzzer target: the macOS `log stream --style ndjson` Sandbox denial parser and monitor
// (hostile: a sandboxed command chooses the paths, hosts and process names its denials log).
// Input: lines. Invariants: never crash; a denial has a Seatbelt-shaped action, a positive pid,
// strictly valid UTF-8 without line breaks and bounded sizes, raw = the sanitized line, and it
// serializes and parses back; the monitor (fake process table and clock, advanced per line)
// accounts for every denial once: noise + unattributed + the counts of the events it emits.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "policy/violations/parser.h"
#include "policy/violations/seatbelt_log.h"
#include "policy/violations/seatbelt_monitor.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/strict_utf8.h"

namespace {

using ccsandbox::fuzz::StrictUtf8;
using ccsandbox::policy::RunViolation;
using ccsandbox::policy::SeatbeltDenial;
using ccsandbox::policy::SeatbeltMonitor;

void CheckDenial(const SeatbeltDenial& d, absl::string_view line) {
  const std::string& action = d.violation.action();
  FUZZ_CHECK(!action.empty() && action.size() <= ccsandbox::policy::kMaxSeatbeltActionBytes);
  FUZZ_CHECK(action[0] >= 'a' && action[0] <= 'z');
  for (size_t i = 0; i < action.size(); ++i) {
    const char c = action[i];
    FUZZ_CHECK((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
               (c == '*' && i + 1 == action.size()));
  }
  FUZZ_CHECK(d.pid > 0);
  FUZZ_CHECK(StrictUtf8(d.violation.target()) && StrictUtf8(d.violation.raw()) &&
             StrictUtf8(d.process));
  FUZZ_CHECK(d.violation.target().find_first_of("\r\n") == std::string::npos);
  FUZZ_CHECK(d.violation.raw().find_first_of("\r\n") == std::string::npos);
  FUZZ_CHECK(d.violation.target().size() <= ccsandbox::policy::kMaxSeatbeltTargetBytes * 3);
  FUZZ_CHECK(line.size() <= ccsandbox::policy::kMaxSeatbeltLogLineBytes);
  FUZZ_CHECK(d.violation.raw() == ccsandbox::policy::SanitizeUtf8(line));
  ccsandbox::v1::SandboxViolation back;
  FUZZ_CHECK(back.ParseFromString(d.violation.SerializeAsString()));
  FUZZ_CHECK(back.action() == action && back.target() == d.violation.target() &&
             back.raw() == d.violation.raw());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  absl::Time now = absl::UnixEpoch();
  // Fake process table: pid p's parent is p / 2, so pid 1's run owns every pid.
  SeatbeltMonitor monitor(
      [](int64_t pid) -> std::optional<int64_t> {
        if (pid <= 1) return std::nullopt;
        return pid / 2;
      },
      [&now] { return now; }, absl::Milliseconds(3));
  monitor.AddRun("odd", 3);
  monitor.AddRun("five", 5);

  uint64_t denials = 0, counted = 0;
  auto take = [&](const std::vector<RunViolation>& events) {
    for (const RunViolation& e : events) {
      FUZZ_CHECK(e.count >= 1);
      FUZZ_CHECK(e.run_id == "odd" || e.run_id == "five");
      counted += e.count;
    }
  };
  for (size_t start = 0; start <= input.size();) {
    size_t eol = input.find('\n', start);
    const bool last = eol == absl::string_view::npos;
    if (last) eol = input.size();
    absl::string_view line = input.substr(start, eol - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::optional<SeatbeltDenial> d = ccsandbox::policy::ParseSeatbeltLogLine(line);
    if (d.has_value()) {
      CheckDenial(*d, line);
      ++denials;
    }
    take(monitor.Feed(line));
    now += absl::Milliseconds(1);
    take(monitor.Flush());
    if (last) break;
    start = eol + 1;
  }
  take(monitor.RemoveRun("odd"));
  take(monitor.RemoveRun("five"));
  FUZZ_CHECK(monitor.Flush().empty());
  FUZZ_CHECK(denials == monitor.noise() + monitor.unattributed() + counted);
  return 0;
}
