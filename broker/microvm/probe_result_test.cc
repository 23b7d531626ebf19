#include "broker/microvm/probe_result.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker::microvm {
namespace {

MicrovmFacts Configured() {
  return MicrovmFacts{.hypervisor = "/usr/bin/qemu-system-x86_64",
                      .kernel = "/vm/vmlinuz",
                      .initrd = "/vm/probe.img",
                      .taken = absl::FromUnixSeconds(0)};
}

BootAttempt Booted(const char* accel, double seconds) {
  return BootAttempt{.accel = accel, .reached_marker = true, .took = absl::Seconds(seconds)};
}

BootAttempt Failed(const char* accel, const char* failure, const char* line) {
  return BootAttempt{.accel = accel, .failure = failure, .output_line = line};
}

// One row per fact that decides: what is missing (the `missing` entry) and what the note says.
struct Case {
  const char* name;
  MicrovmFacts facts;
  bool available;
  const char* missing;               // "" when available
  std::vector<const char*> in_note;  // every one appears in the note
};

class EvaluateMicrovmTest : public testing::TestWithParam<Case> {};

TEST_P(EvaluateMicrovmTest, NamesWhatIsMissing) {
  const Case& c = GetParam();
  const v1::ProbeResult result = EvaluateMicrovm(c.facts);
  EXPECT_EQ(result.available(), c.available) << result.note();
  EXPECT_EQ(result.backend(), v1::SANDBOX_BACKEND_MICROVM);
  if (c.available) {
    EXPECT_EQ(result.missing_size(), 0);
  } else {
    ASSERT_EQ(result.missing_size(), 1) << result.note();
    EXPECT_EQ(result.missing(0), c.missing);
  }
  for (const char* part : c.in_note) {
    EXPECT_TRUE(absl::StrContains(result.note(), part)) << part << " not in: " << result.note();
  }
}

MicrovmFacts With(std::function<void(MicrovmFacts&)> change) {
  MicrovmFacts facts = Configured();
  change(facts);
  return facts;
}

INSTANTIATE_TEST_SUITE_P(
    Table, EvaluateMicrovmTest,
    testing::Values(
        Case{"NotConfigured",
             MicrovmFacts{},
             false,
             "hypervisor",
             {"not configured", "--microvm-hypervisor", "--microvm-kernel"}},
        Case{"OnlyTheKernelMissing",
             With([](auto& f) { f.kernel.clear(); }),
             false,
             "kernel",
             {"not configured: --microvm-kernel not given"}},
        Case{"HypervisorNotFound",
             With([](auto& f) { f.hypervisor_problem = "not found"; }),
             false,
             "hypervisor",
             {"hypervisor /usr/bin/qemu-system-x86_64: not found"}},
        Case{"KernelNotFound",
             With([](auto& f) { f.kernel_problem = "not found"; }),
             false,
             "kernel",
             {"guest kernel /vm/vmlinuz: not found"}},
        Case{"ImageEmpty",
             With([](auto& f) { f.initrd_problem = "empty"; }),
             false,
             "initrd",
             {"guest image /vm/probe.img: empty"}},
        Case{"KvmOnlyAndKvmUnusable",
             With([](auto& f) { f.kvm_problem = "KVM_CREATE_VM: Permission denied"; }),
             false,
             "kvm",
             {"KVM not usable (KVM_CREATE_VM: Permission denied)"}},
        Case{"BootFailed",
             With([](auto& f) {
               f.boots = {Failed("tcg", "exited with status 1 before the marker", "oops")};
             }),
             false,
             "boot",
             {"probe boot failed: tcg: exited with status 1", "('oops')"}},
        Case{
            "KvmHungTcgBooted",
            With([](auto& f) {
              f.boots = {Failed("kvm", "no marker within 10s", "Probing EDD"), Booted("tcg", 1.84)};
            }),
            true,
            "",
            {"marker with tcg in 1.8s", "kvm: no marker within 10s", "/vm/vmlinuz",
             "probed 1970-01-01T00:00:00Z"}},
        Case{"KvmBooted",
             With([](auto& f) { f.boots = {Booted("kvm", 0.4)}; }),
             true,
             "",
             {"marker with kvm in 0.4s"}},
        Case{"NoKvmTcgBooted",
             With([](auto& f) {
               f.kvm_problem = "/dev/kvm: No such file or directory";
               f.boots = {Booted("tcg", 2)};
             }),
             true,
             "",
             {"with tcg in 2.0s (kvm: /dev/kvm: No such file or directory)"}}),
    [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(MicrovmBootLine, SaysAvailableOrUnavailable) {
  v1::ProbeResult result;
  result.set_note("not configured");
  EXPECT_EQ(MicrovmBootLine(result), "microVM unavailable (not configured)");
  result.set_available(true);
  result.set_note("tcg");
  EXPECT_EQ(MicrovmBootLine(result), "microVM available (tcg)");
}

TEST(QuotableLine, FirstErrorElseLastLineWithoutControlCharacters) {
  EXPECT_EQ(QuotableLine("booting\r\nKVM internal error. Suberror: 1\r\nmore\n"),
            "KVM internal error. Suberror: 1");
  EXPECT_EQ(QuotableLine("Probing EDD (edd=off to disable)... ok\r\n\x1b\n"),
            "Probing EDD (edd=off to disable)... ok");
  EXPECT_EQ(QuotableLine(""), "");
  EXPECT_EQ(QuotableLine(std::string(500, 'x')).size(), 163u);
}

}  // namespace
}  // namespace ccsandbox::broker::microvm
