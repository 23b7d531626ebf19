// Timed samples of the benchmark programs: several sides measured in turn, run by run (so drift
// on the host hits them alike), their median and p90, and the table exec_bench prints for them.
// Bench-only; asserts nothing.
//
//   std::vector<Side> sides = {{"ours", [&] { return TimeOurs(); }},
//                              {"raw bwrap", [&] { return TimeCommand(raw); }}};
//   if (absl::Status s = Alternate(warmup, runs, sides); !s.ok()) return s;
//   PrintSides("A  warm path", sides);
//   PrintRatio("A warm path", sides[0], sides[1], 0.3);
#ifndef CCSANDBOX_TESTS_BENCH_BENCH_STATS_H_
#define CCSANDBOX_TESTS_BENCH_BENCH_STATS_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/bench/bench_process.h"

namespace ccsandbox::bench {

struct Summary {
  double median = 0;
  double p90 = 0;  // nearest rank
};

Summary Summarize(std::vector<double> samples);

// Runs a command to completion; its wall time in ms, or an error unless it exited 0.
absl::StatusOr<double> TimeCommand(const SpawnOptions& options);

// One measured side of a figure: `run` returns one sample in ms; `ms` collects the measured ones.
struct Side {
  std::string name;
  std::function<absl::StatusOr<double>()> run;
  std::vector<double> ms = {};
};

// Runs every side once per round, in order: `warmup` unmeasured rounds, then `runs` measured
// ones. The first failing sample ends it with that error; so does g_stop (CANCELLED).
absl::Status Alternate(int warmup, int runs, std::vector<Side>& sides);

// "title (N=…)", then one row per side: median and p90 in ms.
void PrintSides(const std::string& title, const std::vector<Side>& sides);

// One "a/b" row: the ratio of the medians and of the p90s, and whether the median ratio meets
// `target` (no target: the ratios alone); then the medians as a row of the bench table
// (bench_table.h), named "`figure`, median".
void PrintRatio(const std::string& figure, const Side& ours, const Side& base,
                std::optional<double> target);

// "label: median X ms, p90 Y ms (N=n)" on its own indented line.
void PrintLine(const std::string& label, const std::vector<double>& ms);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_BENCH_STATS_H_
