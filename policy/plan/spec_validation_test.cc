#include "policy/plan/spec_validation.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

v1::SandboxSpec GoodSpec() {
  v1::SandboxSpec spec;
  spec.set_session_id("space-1");
  spec.set_workspace_id("ws");
  v1::SandboxBindMount* bind = spec.add_bind_mounts();
  bind->set_host_path("/work/tree");
  bind->set_guest_path("/work/tree");
  return spec;
}

TEST(ValidateSpec, AcceptsAGoodSpec) {
  EXPECT_TRUE(ValidateSpec(GoodSpec(), v1::SANDBOX_BACKEND_NATIVE).ok());
}

struct BadCase {
  const char* name;
  void (*mutate)(v1::SandboxSpec&);
  const char* field;
};

TEST(ValidateSpec, RefusesBadInputNamingTheField) {
  const BadCase cases[] = {
      {"no session", [](v1::SandboxSpec& s) { s.clear_session_id(); }, "sessionId"},
      {"session charset", [](v1::SandboxSpec& s) { s.set_session_id("a/b"); }, "sessionId"},
      {"unknown mode", [](v1::SandboxSpec& s) { s.set_mode("yolo"); }, "mode"},
      {"relative host", [](v1::SandboxSpec& s) { s.mutable_bind_mounts(0)->set_host_path("t"); },
       "bindMounts[0].hostPath"},
      {"dotdot host",
       [](v1::SandboxSpec& s) { s.mutable_bind_mounts(0)->set_host_path("/work/../etc"); },
       "bindMounts[0].hostPath"},
      {"bind root", [](v1::SandboxSpec& s) { s.mutable_bind_mounts(0)->set_host_path("/"); },
       "bindMounts[0].hostPath"},
      {"guest differs",
       [](v1::SandboxSpec& s) { s.mutable_bind_mounts(0)->set_guest_path("/other"); },
       "bindMounts[0].guestPath"},
      {"workdir", [](v1::SandboxSpec& s) { s.set_guest_workdir("rel"); }, "guestWorkdir"},
      {"protected", [](v1::SandboxSpec& s) { s.add_protected_paths("/a/../b"); },
       "protectedPaths[0]"},
      {"runner state", [](v1::SandboxSpec& s) { s.add_runner_state_dirs("x"); },
       "runnerStateDirs[0]"},
      // The input limits come first (input_limits_test.cc has their table).
      {"too many binds",
       [](v1::SandboxSpec& s) {
         for (int i = 0; i < 300; ++i) s.add_bind_mounts()->set_host_path("/w");
       },
       "bindMounts:"},
      {"NUL in a workdir", [](v1::SandboxSpec& s) { s.set_guest_workdir(std::string("/w\0", 3)); },
       "guestWorkdir"},
  };
  for (const BadCase& c : cases) {
    v1::SandboxSpec spec = GoodSpec();
    c.mutate(spec);
    absl::Status s = ValidateSpec(spec, v1::SANDBOX_BACKEND_NATIVE);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(s.message().rfind(c.field, 0), 0u) << c.name << ": " << s;
  }
}

TEST(ValidateSpec, GuestPathMayDifferOnlyOffNative) {
  v1::SandboxSpec spec = GoodSpec();
  spec.mutable_bind_mounts(0)->set_guest_path("/other");
  EXPECT_TRUE(ValidateSpec(spec, v1::SANDBOX_BACKEND_NONE).ok());
}

TEST(ValidateSpec, ProtectedGlobsAreKept) {
  v1::SandboxSpec spec = GoodSpec();
  spec.add_protected_paths("/work/*/checkout");
  EXPECT_TRUE(ValidateSpec(spec, v1::SANDBOX_BACKEND_NATIVE).ok());
}

}  // namespace
}  // namespace ccsandbox::policy
