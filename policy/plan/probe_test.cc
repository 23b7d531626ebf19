#include "policy/plan/probe.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

using Os = HostFacts::Os;

struct Row {
  const char* name;
  HostFacts facts;
  bool available;
  bool requires_install;
  std::vector<std::string> missing;
  const char* boot_line;
};

TEST(EvaluateProbe, FollowsTheSpecProbeTable) {
  const Row rows[] = {
      {"macos",
       {Os::kMacOs, false, false, false, true},
       true,
       false,
       {},
       "agent sandbox ON (sandbox-exec (Seatbelt) — namespace isolation, no kernel boundary)"},
      {"linux",
       {Os::kLinux, false, true, true, false},
       true,
       false,
       {},
       "agent sandbox ON (bubblewrap — namespace isolation, no kernel boundary)"},
      {"wsl2",
       {Os::kLinux, true, true, true, false},
       true,
       false,
       {},
       "agent sandbox ON (bubblewrap — namespace isolation, no kernel boundary (WSL2))"},
      {"no socat",
       {Os::kLinux, false, true, false, false},
       false,
       true,
       {"socat"},
       "no OS-native agent sandbox on this host (install: sudo apt-get install socat)"},
      {"neither",
       {Os::kLinux, false, false, false, false},
       false,
       true,
       {"bubblewrap", "socat"},
       "no OS-native agent sandbox on this host (install: sudo apt-get install bubblewrap "
       "socat)"},
      {"windows",
       {Os::kOther, false, true, true, false},
       false,
       false,
       {},
       "no OS-native agent sandbox on this host (the native sandbox is not offered on this "
       "platform)"},
  };
  for (const Row& row : rows) {
    v1::ProbeResult result = EvaluateProbe(row.facts);
    EXPECT_EQ(result.available(), row.available) << row.name;
    EXPECT_EQ(result.requires_install(), row.requires_install) << row.name;
    EXPECT_EQ(std::vector<std::string>(result.missing().begin(), result.missing().end()),
              row.missing)
        << row.name;
    EXPECT_EQ(result.backend(),
              row.available ? v1::SANDBOX_BACKEND_NATIVE : v1::SANDBOX_BACKEND_UNSPECIFIED)
        << row.name;
    EXPECT_EQ(BootLine(result, true), row.boot_line) << row.name;
    EXPECT_EQ(BootLine(result, false), "agent sandbox DISABLED by --sandbox off") << row.name;
  }
}

TEST(NativeFilenameEnforcement, OnlySeatbeltEnforcesThePatternsItself) {
  EXPECT_EQ(NativeFilenameEnforcement({Os::kMacOs, false, false, false, true}),
            "filename-pattern denies (.env, *.key, *.pem) enforced natively by the Seatbelt "
            "profile");
  EXPECT_EQ(NativeFilenameEnforcement({Os::kMacOs, false, false, false, false}), "");
  EXPECT_EQ(NativeFilenameEnforcement({Os::kLinux, false, true, true, false}), "");
}

}  // namespace
}  // namespace ccsandbox::policy
