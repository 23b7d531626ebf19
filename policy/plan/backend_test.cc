#include "policy/plan/backend.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

TEST(BackendFromName, FollowsTheSpecTable) {
  EXPECT_EQ(BackendFromName(std::nullopt), v1::SANDBOX_BACKEND_NONE);
  EXPECT_EQ(BackendFromName("unknown"), v1::SANDBOX_BACKEND_NONE);
  EXPECT_EQ(BackendFromName(""), v1::SANDBOX_BACKEND_NONE);
  EXPECT_EQ(BackendFromName("none"), v1::SANDBOX_BACKEND_NONE);
  EXPECT_EQ(BackendFromName("native"), v1::SANDBOX_BACKEND_NATIVE);
  EXPECT_EQ(BackendFromName("docker"), v1::SANDBOX_BACKEND_NATIVE);
  EXPECT_EQ(BackendFromName("microvm"), v1::SANDBOX_BACKEND_MICROVM);
}

TEST(BackendName, NamesEveryBackend) {
  EXPECT_EQ(BackendName(v1::SANDBOX_BACKEND_NONE), "none");
  EXPECT_EQ(BackendName(v1::SANDBOX_BACKEND_NATIVE), "native");
  EXPECT_EQ(BackendName(v1::SANDBOX_BACKEND_MICROVM), "microvm");
}

HostSandbox Host(bool enabled, bool available) {
  HostSandbox host;
  host.sandbox_enabled = enabled;
  host.probe.set_available(available);
  host.probe.set_note("bubblewrap — namespace isolation, no kernel boundary");
  if (!available) host.probe.set_install_hint("install: sudo apt-get install socat");
  return host;
}

TEST(SelectBackend, UnspecifiedTakesTheDispatchDefault) {
  absl::StatusOr<BackendChoice> on = SelectBackend("", Host(true, true));
  ASSERT_TRUE(on.ok());
  EXPECT_EQ(on->actual, v1::SANDBOX_BACKEND_NATIVE);
  EXPECT_EQ(on->requested, v1::SANDBOX_BACKEND_UNSPECIFIED);

  absl::StatusOr<BackendChoice> off = SelectBackend("", Host(false, true));
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->actual, v1::SANDBOX_BACKEND_NONE);
  EXPECT_NE(off->note.find("--sandbox off"), std::string::npos);

  absl::StatusOr<BackendChoice> missing = SelectBackend("", Host(true, false));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->actual, v1::SANDBOX_BACKEND_NONE);
  EXPECT_NE(missing->note.find("apt-get install socat"), std::string::npos);
}

TEST(SelectBackend, ExplicitRequestsNeverDowngrade) {
  EXPECT_EQ(SelectBackend("native", Host(false, true)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(SelectBackend("docker", Host(true, false)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(SelectBackend("microvm", Host(true, true)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(SelectBackend("nativ", Host(true, true)).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<BackendChoice> docker = SelectBackend("docker", Host(true, true));
  ASSERT_TRUE(docker.ok());
  EXPECT_EQ(docker->requested, v1::SANDBOX_BACKEND_NATIVE);
  EXPECT_EQ(docker->actual, v1::SANDBOX_BACKEND_NATIVE);
  absl::StatusOr<BackendChoice> none = SelectBackend("none", Host(true, true));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->actual, v1::SANDBOX_BACKEND_NONE);
}

TEST(SelectBackend, ExplicitMicrovmNamesTheMissingPartOrStaysMicrovm) {
  HostSandbox host = Host(true, true);
  host.microvm.set_note("guest kernel /k: not found");
  absl::StatusOr<BackendChoice> missing = SelectBackend("microvm", host);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("guest kernel /k: not found"), std::string::npos);

  host.microvm.set_available(true);
  host.microvm.set_note("probe boot reached its marker with tcg");
  absl::StatusOr<BackendChoice> vm = SelectBackend("microvm", host);
  ASSERT_TRUE(vm.ok());
  EXPECT_EQ(vm->requested, v1::SANDBOX_BACKEND_MICROVM);
  EXPECT_EQ(vm->actual, v1::SANDBOX_BACKEND_MICROVM);
  // An unspecified request is command wrapping: never upgraded to a VM.
  EXPECT_EQ(SelectBackend("", host)->actual, v1::SANDBOX_BACKEND_NATIVE);
}

// One row per (request, configured default, host) of the spec's terminal rule.
struct TerminalCase {
  const char* name;
  const char* requested;
  const char* default_name;
  bool enabled, native, microvm;
  absl::StatusCode code;
  v1::SandboxBackend actual;
  const char* note_has;  // in the note, or in the error message
};

class SelectTerminalBackendTable : public testing::TestWithParam<TerminalCase> {};

TEST_P(SelectTerminalBackendTable, FollowsTheTerminalRule) {
  const TerminalCase& c = GetParam();
  HostSandbox host = Host(c.enabled, c.native);
  host.microvm.set_available(c.microvm);
  host.microvm.set_note(c.microvm ? "qemu microvm, tcg" : "no hypervisor configured");
  absl::StatusOr<BackendChoice> choice = SelectTerminalBackend(c.requested, c.default_name, host);
  ASSERT_EQ(choice.status().code(), c.code) << choice.status();
  const std::string text = choice.ok() ? choice->note : std::string(choice.status().message());
  EXPECT_NE(text.find(c.note_has), std::string::npos) << text;
  if (choice.ok()) {
    EXPECT_EQ(choice->actual, c.actual);
  }
}

constexpr absl::StatusCode kOk = absl::StatusCode::kOk;
constexpr absl::StatusCode kFailed = absl::StatusCode::kFailedPrecondition;
INSTANTIATE_TEST_SUITE_P(
    Spec, SelectTerminalBackendTable,
    testing::Values(
        TerminalCase{"DefaultIsTheHostShell", "", "", true, true, true, kOk,
                     v1::SANDBOX_BACKEND_NONE, "terminal default"},
        TerminalCase{"DefaultNoneEvenWithoutASandbox", "", "", false, false, false, kOk,
                     v1::SANDBOX_BACKEND_NONE, "terminal default"},
        TerminalCase{"ExplicitNative", "native", "", true, true, false, kOk,
                     v1::SANDBOX_BACKEND_NATIVE, "native requested"},
        TerminalCase{"ExplicitNativeUnavailableFails", "native", "", true, false, false, kFailed,
                     v1::SANDBOX_BACKEND_NONE, "never shows a native label"},
        TerminalCase{"ExplicitNativeSandboxOffFails", "native", "", false, true, false, kFailed,
                     v1::SANDBOX_BACKEND_NONE, "--sandbox off"},
        TerminalCase{"ExplicitMicrovmUnavailableFails", "microvm", "", true, true, false, kFailed,
                     v1::SANDBOX_BACKEND_NONE, "no hypervisor configured"},
        TerminalCase{"ExplicitMicrovmAvailable", "microvm", "", true, true, true, kOk,
                     v1::SANDBOX_BACKEND_MICROVM, "qemu"},
        TerminalCase{"DefaultMicrovmDegradesToNative", "", "microvm", true, true, false, kOk,
                     v1::SANDBOX_BACKEND_NATIVE, "degraded to native"},
        TerminalCase{"DefaultMicrovmNeverDegradesToTheHostShell", "", "microvm", true, false, false,
                     kFailed, v1::SANDBOX_BACKEND_NONE, "degraded to native"},
        TerminalCase{"ExplicitNoneOverridesADefault", "none", "native", true, true, false, kOk,
                     v1::SANDBOX_BACKEND_NONE, "none requested explicitly"},
        TerminalCase{"DefaultNative", "", "native", true, true, false, kOk,
                     v1::SANDBOX_BACKEND_NATIVE, "native"},
        TerminalCase{"UnknownNameIsBadInput", "vm", "", true, true, true,
                     absl::StatusCode::kInvalidArgument, v1::SANDBOX_BACKEND_NONE, "'vm'"}),
    [](const testing::TestParamInfo<TerminalCase>& info) { return info.param.name; });

}  // namespace
}  // namespace ccsandbox::policy
