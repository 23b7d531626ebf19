#include "policy/filename_policy.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

v1::SandboxSpec Spec(const char* mode, bool read_only) {
  v1::SandboxSpec spec;
  spec.set_mode(mode);
  v1::SandboxBindMount* bind = spec.add_bind_mounts();
  bind->set_host_path("/w");
  bind->set_read_only(read_only);
  return spec;
}

TEST(DecideFilenamePolicy, NativeWithWritableBindsFailsClosedSayingWhy) {
  auto decision = DecideFilenamePolicy(Spec("chat", false), v1::SANDBOX_BACKEND_NATIVE, false);
  EXPECT_EQ(decision.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(decision.status().message());
  EXPECT_NE(message.find(".env, .env.*, *.key, *.pem"), std::string::npos) << message;
  EXPECT_NE(message.find("bubblewrap"), std::string::npos) << message;
}

TEST(DecideFilenamePolicy, RunnerStateDirsAreWritableInEveryMode) {
  v1::SandboxSpec spec = Spec("review", false);
  spec.add_runner_state_dirs("/state");
  EXPECT_FALSE(DecideFilenamePolicy(spec, v1::SANDBOX_BACKEND_NATIVE, false).ok());
}

TEST(DecideFilenamePolicy, NothingWritableNeedsNothing) {
  for (const char* mode : {"review", "plan", "orchestrate"}) {
    auto d = DecideFilenamePolicy(Spec(mode, false), v1::SANDBOX_BACKEND_NATIVE, false);
    ASSERT_TRUE(d.ok()) << mode;
    EXPECT_FALSE(d->weakened);
  }
  EXPECT_TRUE(DecideFilenamePolicy(Spec("chat", true), v1::SANDBOX_BACKEND_NATIVE, false).ok());
}

TEST(DecideFilenamePolicy, AnExplicitEmptyListRunsAndSaysItIsWeakened) {
  v1::SandboxSpec spec = Spec("chat", false);
  spec.mutable_write_deny_patterns();
  auto d = DecideFilenamePolicy(spec, v1::SANDBOX_BACKEND_NATIVE, false);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->weakened);
  EXPECT_NE(d->note.find("WEAKENED by request"), std::string::npos);
}

TEST(DecideFilenamePolicy, EnforcementOrBackendNoneRun) {
  auto enforced = DecideFilenamePolicy(Spec("chat", false), v1::SANDBOX_BACKEND_NATIVE, true);
  ASSERT_TRUE(enforced.ok());
  EXPECT_NE(enforced->note.find("enforced at creation time"), std::string::npos);
  EXPECT_TRUE(DecideFilenamePolicy(Spec("chat", false), v1::SANDBOX_BACKEND_NONE, false).ok());
}

}  // namespace
}  // namespace ccsandbox::policy
