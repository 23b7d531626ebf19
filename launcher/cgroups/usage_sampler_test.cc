#include "launcher/cgroups/usage_sampler.h"

#include <vector>

#include "gtest/gtest.h"

namespace ccsandbox::launcher {
namespace {

struct Read {
  uint64_t current;
  uint64_t kernel_peak;
  uint64_t expected_peak;
};

// Each row is one wake-up's read; the mark is the largest count seen so far, or the kernel's
// own mark when that is larger (forks between two samples).
TEST(UsageSampler, KeepsTheLargestCountSeenOrTheKernelsMark) {
  const std::vector<Read> reads = {
      {1, 0, 1}, {5, 0, 5}, {2, 0, 5}, {0, 9, 9}, {12, 9, 12}, {3, 0, 12},
  };
  size_t next = 0;
  UsageSampler sampler([&]() -> std::optional<CgroupUsage> {
    CgroupUsage usage;
    usage.pids_current = reads[next].current;
    usage.pids_peak = reads[next].kernel_peak;
    return usage;
  });
  for (; next < reads.size(); ++next) {
    std::optional<CgroupUsage> now = sampler.Sample();
    ASSERT_TRUE(now.has_value());
    EXPECT_EQ(now->pids_peak, reads[next].expected_peak) << "read " << next;
    EXPECT_EQ(now->pids_current, reads[next].current);
  }
}

TEST(UsageSampler, NothingReadIsNothing) {
  UsageSampler sampler([]() -> std::optional<CgroupUsage> { return std::nullopt; });
  EXPECT_FALSE(sampler.Sample().has_value());
}

}  // namespace
}  // namespace ccsandbox::launcher
