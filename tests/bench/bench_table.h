// One row of the table scripts/bench.sh prints: a figure, what it is compared with (measured in
// the same run), their ratio and the figure's target. Each bench prints its rows among its own
// output as single machine-readable lines; the script collects them. Bench-only; asserts nothing.
//
//   ReportRow({.figure = "B CLI path, median", .ours = 21.3, .unit = "ms",
//              .baseline_name = "raw bwrap", .baseline = 10.2, .target = RatioAtMost(2.0)});
// prints
//   @row<TAB>B CLI path, median<TAB>21.3 ms<TAB>raw bwrap<TAB>10.2 ms<TAB>2.09x<TAB><= 2x<TAB>no
#ifndef CCSANDBOX_TESTS_BENCH_BENCH_TABLE_H_
#define CCSANDBOX_TESTS_BENCH_BENCH_TABLE_H_

#include <string>

namespace ccsandbox::bench {

// A figure's target: nothing, or a bound on ours/baseline or on ours itself.
struct Goal {
  enum class Kind { kNone, kRatioAtMost, kRatioAtLeast, kAtMost, kAtLeast };
  Kind kind = Kind::kNone;
  double bound = 0;
};

inline Goal NoTarget() { return {}; }
inline Goal RatioAtMost(double bound) { return {Goal::Kind::kRatioAtMost, bound}; }
inline Goal RatioAtLeast(double bound) { return {Goal::Kind::kRatioAtLeast, bound}; }
inline Goal AtMost(double bound) { return {Goal::Kind::kAtMost, bound}; }
inline Goal AtLeast(double bound) { return {Goal::Kind::kAtLeast, bound}; }

struct Row {
  std::string figure;
  double ours = 0;
  std::string unit;           // of ours, of the baseline and of an absolute bound
  std::string baseline_name;  // empty: the figure has no baseline
  double baseline = 0;
  Goal target = {};
};

// The line's fixed prefix; the fields after it are tab-separated.
inline constexpr char kRowPrefix[] = "@row\t";

// "@row\tfigure\tours\tbaseline name\tbaseline\tratio\ttarget\tmet" without a newline; "-" for
// what the row lacks (no baseline: no ratio; no target: met is "-"). A ratio target with no
// baseline cannot be judged: met is "-".
std::string FormatRow(const Row& row);

// FormatRow's line on stdout, flushed (so it stays in order with the bench's other output).
void ReportRow(const Row& row);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_BENCH_TABLE_H_
