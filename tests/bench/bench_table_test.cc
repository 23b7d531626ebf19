#include "tests/bench/bench_table.h"

#include "gtest/gtest.h"

namespace ccsandbox::bench {
namespace {

TEST(BenchTableTest, RatioTargetMetAndMissed) {
  Row row{.figure = "B CLI path, median",
          .ours = 21.34,
          .unit = "ms",
          .baseline_name = "raw bwrap",
          .baseline = 10.2,
          .target = RatioAtMost(2.0)};
  EXPECT_EQ(FormatRow(row),
            "@row\tB CLI path, median\t21.3 ms\traw bwrap\t10.2 ms\t2.09x\t<= 2x\tno");
  row.ours = 15;
  EXPECT_EQ(FormatRow(row),
            "@row\tB CLI path, median\t15.0 ms\traw bwrap\t10.2 ms\t1.47x\t<= 2x\tyes");
}

TEST(BenchTableTest, RatioAtLeast) {
  const Row row{.figure = "bulk",
                .ours = 700,
                .unit = "MB/s",
                .baseline_name = "direct",
                .baseline = 1500,
                .target = RatioAtLeast(0.7)};
  EXPECT_EQ(FormatRow(row), "@row\tbulk\t700 MB/s\tdirect\t1500 MB/s\t0.47x\t>= 0.7x\tno");
}

TEST(BenchTableTest, AbsoluteTargetIsJudgedOnOursEvenWithABaseline) {
  const Row row{.figure = "tunnels/s",
                .ours = 5200,
                .unit = "/s",
                .baseline_name = "direct",
                .baseline = 19000,
                .target = AtLeast(5000)};
  EXPECT_EQ(FormatRow(row), "@row\ttunnels/s\t5200 /s\tdirect\t19000 /s\t0.27x\t>= 5000 /s\tyes");
}

TEST(BenchTableTest, NoBaselineNoTarget) {
  const Row row{.figure = "memory per session", .ours = 3.456, .unit = "MiB"};
  EXPECT_EQ(FormatRow(row), "@row\tmemory per session\t3.46 MiB\t-\t-\t-\t-\t-");
}

TEST(BenchTableTest, RatioTargetWithoutUsableBaselineCannotBeJudged) {
  const Row row{.figure = "x",
                .ours = 1,
                .unit = "ms",
                .baseline_name = "raw",
                .baseline = 0,
                .target = RatioAtMost(1.5)};
  EXPECT_EQ(FormatRow(row), "@row\tx\t1.00 ms\traw\t0 ms\t-\t<= 1.5x\t-");
}

TEST(BenchTableTest, AtMostZeroAndFieldsWithoutSeparators) {
  const Row row{.figure = "fds\tchange\n", .ours = 0, .target = AtMost(0)};
  EXPECT_EQ(FormatRow(row), "@row\tfds change \t0\t-\t-\t-\t<= 0\tyes");
}

}  // namespace
}  // namespace ccsandbox::bench
