#include "launcher/cgroups/resource_policy.h"

#include "gtest/gtest.h"

namespace ccsandbox::launcher {
namespace {

const ResourcePolicy kPolicy =
    MakeResourcePolicy(/*host_memory_bytes=*/uint64_t{16} << 30, /*cpus=*/2, /*max_pids=*/0,
                       /*max_memory_bytes=*/0, /*max_cpu_millicores=*/0);

TEST(ResourcePolicy, NothingAskedGetsTheDefaults) {
  absl::StatusOr<CgroupLimits> limits = EffectiveLimits(nullptr, kPolicy);
  ASSERT_TRUE(limits.ok());
  EXPECT_EQ(limits->pids_max, 4096u);
  EXPECT_EQ(limits->memory_max_bytes, uint64_t{4} << 30);
  EXPECT_EQ(limits->swap_max_bytes, 0u);
  EXPECT_EQ(limits->cpu_weight, 100u);
  EXPECT_EQ(limits->cpu_millicores, 0u);
  EXPECT_EQ(DescribeLimits(*limits),
            "pids 4096, memory 4 GiB + swap 0 bytes, cpu weight 100, no cpu quota");
}

TEST(ResourcePolicy, AskedFieldsReplaceTheDefaultsOneByOne) {
  v1::SandboxResources asked;
  asked.set_memory_max_bytes(512 << 20);
  asked.set_cpu_millicores(1500);
  absl::StatusOr<CgroupLimits> limits = EffectiveLimits(&asked, kPolicy);
  ASSERT_TRUE(limits.ok());
  EXPECT_EQ(limits->pids_max, 4096u);
  EXPECT_EQ(limits->memory_max_bytes, uint64_t{512} << 20);
  EXPECT_EQ(limits->cpu_millicores, 1500u);
  EXPECT_EQ(DescribeLimits(*limits),
            "pids 4096, memory 512 MiB + swap 0 bytes, cpu weight 100, cpu quota 1.50 CPUs");
}

TEST(ResourcePolicy, RequestsAboveACeilingOrOutOfRangeAreRefusedNamingTheField) {
  struct Case {
    const char* name;
    v1::SandboxResources asked;
    const char* field;
  };
  auto with = [](auto set) {
    v1::SandboxResources r;
    set(r);
    return r;
  };
  const Case cases[] = {
      {"pids", with([](auto& r) { r.set_pids_max(40000); }), "resources.pidsMax: 40000 is above"},
      {"memory", with([](auto& r) { r.set_memory_max_bytes(uint64_t{17} << 30); }),
       "resources.memoryMaxBytes:"},
      {"swap", with([](auto& r) { r.set_swap_max_bytes(uint64_t{17} << 30); }),
       "resources.swapMaxBytes:"},
      {"weight", with([](auto& r) { r.set_cpu_weight(10001); }), "resources.cpuWeight:"},
      {"quota", with([](auto& r) { r.set_cpu_millicores(2001); }), "resources.cpuMillicores:"},
      {"too few pids", with([](auto& r) { r.set_pids_max(3); }), "resources.pidsMax: below 8"},
      {"too little memory", with([](auto& r) { r.set_memory_max_bytes(1 << 20); }),
       "resources.memoryMaxBytes: below 16 MiB"},
      {"quota below the kernel's minimum", with([](auto& r) { r.set_cpu_millicores(9); }),
       "resources.cpuMillicores: 9 is below 10"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<CgroupLimits> limits = EffectiveLimits(&c.asked, kPolicy);
    ASSERT_FALSE(limits.ok()) << c.name;
    EXPECT_EQ(limits.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(limits.status().message().find(c.field), std::string::npos)
        << c.name << ": " << limits.status();
  }
}

TEST(ResourcePolicy, CeilingsFromTheLaunchersFlagsBoundTheDefaultsToo) {
  const ResourcePolicy tight = MakeResourcePolicy(uint64_t{16} << 30, 2, 1000, 1 << 30, 500);
  absl::StatusOr<CgroupLimits> limits = EffectiveLimits(nullptr, tight);
  ASSERT_TRUE(limits.ok());
  EXPECT_EQ(limits->pids_max, 1000u);
  EXPECT_EQ(limits->memory_max_bytes, uint64_t{1} << 30);
  v1::SandboxResources asked;
  asked.set_cpu_millicores(600);
  EXPECT_FALSE(EffectiveLimits(&asked, tight).ok());
}

}  // namespace
}  // namespace ccsandbox::launcher
