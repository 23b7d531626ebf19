#include "tests/bench/bench_table.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace ccsandbox::bench {
namespace {

// Three significant digits or so, never an exponent: 12345 -> "12345", 4.5678 -> "4.57".
std::string Number(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 100 || value == 0) return absl::StrFormat("%.0f", value);
  if (magnitude >= 10) return absl::StrFormat("%.1f", value);
  if (magnitude >= 0.1) return absl::StrFormat("%.2f", value);
  return absl::StrFormat("%.2g", value);
}

std::string WithUnit(double value, const std::string& unit) {
  return unit.empty() ? Number(value) : absl::StrCat(Number(value), " ", unit);
}

// A field never holds the separator or a line break.
std::string Field(const std::string& text) {
  return absl::StrReplaceAll(text, {{"\t", " "}, {"\n", " "}});
}

std::string TargetText(const Row& row) {
  const std::string bound = absl::StrFormat("%g", row.target.bound);
  switch (row.target.kind) {
    case Goal::Kind::kNone:
      return "-";
    case Goal::Kind::kRatioAtMost:
      return absl::StrCat("<= ", bound, "x");
    case Goal::Kind::kRatioAtLeast:
      return absl::StrCat(">= ", bound, "x");
    case Goal::Kind::kAtMost:
      return absl::StrCat("<= ", bound, row.unit.empty() ? "" : " ", row.unit);
    case Goal::Kind::kAtLeast:
      return absl::StrCat(">= ", bound, row.unit.empty() ? "" : " ", row.unit);
  }
  return "-";
}

// Whether the row meets its target; nullopt when there is none or it cannot be judged.
std::optional<bool> Met(const Row& row, std::optional<double> ratio) {
  const double bound = row.target.bound;
  switch (row.target.kind) {
    case Goal::Kind::kNone:
      return std::nullopt;
    case Goal::Kind::kRatioAtMost:
      if (!ratio.has_value()) return std::nullopt;
      return *ratio <= bound;
    case Goal::Kind::kRatioAtLeast:
      if (!ratio.has_value()) return std::nullopt;
      return *ratio >= bound;
    case Goal::Kind::kAtMost:
      return row.ours <= bound;
    case Goal::Kind::kAtLeast:
      return row.ours >= bound;
  }
  return std::nullopt;
}

}  // namespace

std::string FormatRow(const Row& row) {
  const bool has_baseline = !row.baseline_name.empty();
  std::optional<double> ratio;
  if (has_baseline && row.baseline != 0 && std::isfinite(row.ours / row.baseline)) {
    ratio = row.ours / row.baseline;
  }
  const std::optional<bool> met = Met(row, ratio);
  return absl::StrCat(kRowPrefix, Field(row.figure), "\t", Field(WithUnit(row.ours, row.unit)),
                      "\t", has_baseline ? Field(row.baseline_name) : "-", "\t",
                      has_baseline ? Field(WithUnit(row.baseline, row.unit)) : "-", "\t",
                      ratio.has_value() ? absl::StrCat(Number(*ratio), "x") : "-", "\t",
                      Field(TargetText(row)), "\t", met.has_value() ? (*met ? "yes" : "no") : "-");
}

void ReportRow(const Row& row) {
  std::printf("%s\n", FormatRow(row).c_str());
  std::fflush(stdout);
}

}  // namespace ccsandbox::bench
