#include "tests/bench/bench_stats.h"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/bench/bench_table.h"

namespace ccsandbox::bench {

Summary Summarize(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  Summary s;
  s.median = n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  s.p90 = samples[static_cast<size_t>(std::ceil(0.9 * n)) - 1];
  return s;
}

absl::StatusOr<double> TimeCommand(const SpawnOptions& options) {
  const Clock::time_point start = Clock::now();
  absl::StatusOr<Child> child = Child::Spawn(options);
  if (!child.ok()) return child.status();
  absl::StatusOr<int> status = child->Wait();
  const double ms = MsSince(start);
  if (!status.ok()) return status.status();
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return absl::InternalError(absl::StrCat(options.argv[0], " ended with wait status ", *status,
                                            " (output: ", options.output, ")"));
  }
  return ms;
}

absl::Status Alternate(int warmup, int runs, std::vector<Side>& sides) {
  for (int i = 0; i < warmup + runs && !g_stop; ++i) {
    for (Side& side : sides) {
      absl::StatusOr<double> ms = side.run();
      if (!ms.ok()) return ms.status();
      if (i >= warmup) side.ms.push_back(*ms);
    }
  }
  return g_stop ? absl::CancelledError("interrupted") : absl::OkStatus();
}

void PrintSides(const std::string& title, const std::vector<Side>& sides) {
  absl::PrintF("%s (N=%d each)\n", title, sides.empty() ? 0 : sides.front().ms.size());
  absl::PrintF("  %-16s %9s %9s\n", "", "median", "p90");
  for (const Side& side : sides) {
    const Summary s = Summarize(side.ms);
    absl::PrintF("  %-16s %6.2f ms %6.2f ms\n", side.name, s.median, s.p90);
  }
}

void PrintRatio(const std::string& figure, const Side& ours, const Side& base,
                std::optional<double> target) {
  const Summary o = Summarize(ours.ms);
  const Summary b = Summarize(base.ms);
  const std::string label = absl::StrCat(ours.name, "/", base.name);
  const double median = o.median / b.median;
  if (!target.has_value()) {
    absl::PrintF("  %-16s %8.2fx %8.2fx\n", label, median, o.p90 / b.p90);
  } else {
    absl::PrintF("  %-16s %8.2fx %8.2fx   target <= %gx %s (medians): %s\n", label, median,
                 o.p90 / b.p90, *target, base.name, median <= *target ? "met" : "NOT met");
  }
  ReportRow({.figure = absl::StrCat(figure, ", median"),
             .ours = o.median,
             .unit = "ms",
             .baseline_name = base.name,
             .baseline = b.median,
             .target = target.has_value() ? RatioAtMost(*target) : NoTarget()});
}

void PrintLine(const std::string& label, const std::vector<double>& ms) {
  const Summary s = Summarize(ms);
  absl::PrintF("  %s: median %.2f ms, p90 %.2f ms (N=%d)\n", label, s.median, s.p90, ms.size());
}

}  // namespace ccsandbox::bench
