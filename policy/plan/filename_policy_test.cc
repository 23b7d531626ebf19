#include "policy/plan/filename_policy.h"

#include "gtest/gtest.h"
#include "policy/plan/deny_sets.h"

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
  auto d = DecideFilenamePolicy(spec, v1::SANDBOX_BACKEND_NATIVE, true);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->weakened);
  EXPECT_TRUE(d->create_guard);  // the trusted names still hold
  EXPECT_NE(d->note.find("WEAKENED by request"), std::string::npos);
}

// The opt-out drops the filename patterns only: start-up files, git metadata and keys must
// still be refused at creation, which needs the guard.
TEST(DecideFilenamePolicy, TheOptOutDoesNotCoverTrustedNames) {
  v1::SandboxSpec spec = Spec("chat", false);
  spec.mutable_write_deny_patterns();
  auto d = DecideFilenamePolicy(spec, v1::SANDBOX_BACKEND_NATIVE, false);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(d.status().message().find("start-up files"), std::string::npos) << d.status();
  spec.set_mode("review");
  EXPECT_TRUE(DecideFilenamePolicy(spec, v1::SANDBOX_BACKEND_NATIVE, false).ok());
}

TEST(DecideFilenamePolicy, EnforcementOrBackendNoneRun) {
  auto enforced = DecideFilenamePolicy(Spec("chat", false), v1::SANDBOX_BACKEND_NATIVE, true);
  ASSERT_TRUE(enforced.ok());
  EXPECT_EQ(enforced->create_guard_patterns, StandardFilenameDenyPatterns());
  EXPECT_TRUE(enforced->create_guard);
  ASSERT_TRUE(enforced.ok());
  EXPECT_NE(enforced->note.find("enforced at creation time"), std::string::npos);
  EXPECT_TRUE(DecideFilenamePolicy(Spec("chat", false), v1::SANDBOX_BACKEND_NONE, false).ok());
}

TEST(DecideFilenamePolicy, OnlyWritableEnforcedSessionsCarryAGuard) {
  for (bool enforcement : {false, true}) {
    auto read_only =
        DecideFilenamePolicy(Spec("review", false), v1::SANDBOX_BACKEND_NATIVE, enforcement);
    ASSERT_TRUE(read_only.ok());
    EXPECT_FALSE(read_only->create_guard);
  }
  v1::SandboxSpec weakened = Spec("chat", false);
  weakened.mutable_write_deny_patterns();
  auto d = DecideFilenamePolicy(weakened, v1::SANDBOX_BACKEND_NATIVE, true);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->create_guard);
  EXPECT_TRUE(d->create_guard_patterns.empty());
  EXPECT_TRUE(d->weakened);
}

TEST(FilenameEnforcementNote, SaysWhatHoldsForEachLauncherAnswer) {
  EXPECT_NE(FilenameEnforcementNote(true, true, "enforced at creation time (Landlock ABI 4)")
                .find("enforced at creation time"),
            std::string::npos);
  EXPECT_NE(FilenameEnforcementNote(true, false, "no Landlock").find("NOT enforceable"),
            std::string::npos);
  EXPECT_NE(FilenameEnforcementNote(false, false, "connection refused").find("refused until"),
            std::string::npos);
}

}  // namespace
}  // namespace ccsandbox::policy
