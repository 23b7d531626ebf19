#include <signal.h>

#include "broker/cli_events.h"
#include "broker/cli_spec.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

TEST(ParseSpecJson, AcceptsTheSpecSpellings) {
  auto spec = ParseSpecJson("s.json", R"({
    "sessionId": "space-1", "mode": "review", "networkEnabled": false,
    "bindMounts": [{"hostPath": "/w", "guestPath": "/w", "readOnly": true}],
    "protectedPaths": ["/repo"], "runnerStateDirs": ["/state"], "egressAllowlist": ["*.x.com"]
  })");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->session_id(), "space-1");
  EXPECT_EQ(spec->mode(), "review");
  EXPECT_TRUE(spec->has_network_enabled());
  EXPECT_FALSE(spec->network_enabled());
  EXPECT_TRUE(spec->bind_mounts(0).read_only());
  EXPECT_EQ(spec->egress_allowlist(0), "*.x.com");
}

TEST(ParseSpecJson, NetworkEnabledUnsetIsDistinguishable) {
  auto spec = ParseSpecJson("s.json", R"({"sessionId": "a"})");
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->has_network_enabled());
}

TEST(ParseSpecJson, RefusesUnknownFieldsAndMalformedJsonNamingTheProblem) {
  auto unknown = ParseSpecJson("s.json", R"({"sesionId": "a"})");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("sesionId"), std::string::npos) << unknown.status();
  EXPECT_NE(unknown.status().message().find("s.json"), std::string::npos);
  EXPECT_EQ(ParseSpecJson("s.json", "{").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseSpecJson("s.json", R"({"readOnly": 3})").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(LoadSpecFile, MissingFileIsAnError) {
  EXPECT_FALSE(LoadSpecFile("/nonexistent/spec.json").ok());
}

TEST(DefaultSpec, BindsTheWorkdirReadWrite) {
  v1::SandboxSpec spec = DefaultSpec("/w/tree", "cli-1");
  ASSERT_EQ(spec.bind_mounts_size(), 1);
  EXPECT_EQ(spec.bind_mounts(0).host_path(), "/w/tree");
  EXPECT_EQ(spec.bind_mounts(0).guest_path(), "/w/tree");
  EXPECT_FALSE(spec.bind_mounts(0).read_only());
  EXPECT_EQ(spec.guest_workdir(), "/w/tree");
  EXPECT_EQ(spec.session_id(), "cli-1");
}

TEST(ExitCodeFor, MapsTerminalEvents) {
  v1::SandboxEvent e;
  EXPECT_FALSE(ExitCodeFor(e).has_value());
  e.set_stdout("x");
  EXPECT_FALSE(ExitCodeFor(e).has_value());
  e.mutable_exit()->set_exit_code(3);
  EXPECT_EQ(ExitCodeFor(e), 3);
  e.mutable_killed()->set_signal(SIGTERM);
  EXPECT_EQ(ExitCodeFor(e), 128 + SIGTERM);
  e.mutable_killed()->set_signal(0);
  EXPECT_EQ(ExitCodeFor(e), 128 + SIGKILL);
  e.mutable_error()->set_message("boom");
  EXPECT_EQ(ExitCodeFor(e), 125);
}

TEST(StderrNoticeFor, PrintsViolationsAsSpecified) {
  v1::SandboxEvent e;
  e.mutable_violation()->set_action("file-write*");
  e.mutable_violation()->set_target("/etc/x");
  EXPECT_EQ(StderrNoticeFor(e), "sandbox: violation file-write* /etc/x\n");
  e.set_stdout("x");
  EXPECT_EQ(StderrNoticeFor(e), "");
}

TEST(EventJson, PrintsExitCodeZero) {
  v1::SandboxEvent e;
  e.mutable_exit()->set_exit_code(0);
  EXPECT_EQ(EventJson(e), R"({"sessionId":"","backend":"SANDBOX_BACKEND_UNSPECIFIED","exit":{"exitCode":0}})");
}

}  // namespace
}  // namespace ccsandbox::broker
