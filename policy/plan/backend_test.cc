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

}  // namespace
}  // namespace ccsandbox::policy
