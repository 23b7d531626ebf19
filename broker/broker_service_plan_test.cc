// RenderPlan: Launch's decisions for a request, with nothing started.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "broker/broker_service_fixture.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker::testing {
namespace {

bool Has(const google::protobuf::RepeatedPtrField<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

class RenderPlanTest : public BrokerServiceTest {
 protected:
  grpc::Status RenderPlan(const v1::LaunchRequest& launch, v1::RenderPlanResponse* response,
                          const std::string& platform = "") {
    grpc::ClientContext context;
    v1::RenderPlanRequest request;
    *request.mutable_launch() = launch;
    request.set_platform(platform);
    return stub_->RenderPlan(&context, request, response);
  }
};

TEST_F(RenderPlanTest, ABadSpecIsRefusedAsLaunchRefusesIt) {
  launcher_->Start();
  StartBroker();
  v1::LaunchRequest bad = LaunchRequest("bad");
  bad.mutable_spec()->set_mode("bogus");
  v1::RenderPlanResponse response;
  grpc::Status plan = RenderPlan(bad, &response);
  v1::SandboxHandle handle;
  grpc::Status launch = Launch(bad, &handle);
  EXPECT_EQ(plan.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << plan.error_message();
  EXPECT_EQ(plan.error_code(), launch.error_code());
  EXPECT_EQ(plan.error_message(), launch.error_message());

  v1::LaunchRequest relative = LaunchRequest("relative");
  relative.mutable_spec()->mutable_bind_mounts(0)->set_host_path("work");
  plan = RenderPlan(relative, &response);
  launch = Launch(relative, &handle);
  EXPECT_EQ(plan.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << plan.error_message();
  EXPECT_EQ(plan.error_message(), launch.error_message());
}

TEST_F(RenderPlanTest, MacosRendersTheSeatbeltProfileAndAnUnknownPlatformIsRefused) {
  launcher_->Start();
  StartBroker();
  v1::LaunchRequest mac = LaunchRequest("mac");
  mac.mutable_spec()->add_protected_paths("/tmp/kept \"(x)\"");
  v1::RenderPlanResponse response;
  grpc::Status macos = RenderPlan(mac, &response, "macos");
  ASSERT_TRUE(macos.ok()) << macos.error_message();
  EXPECT_EQ(response.platform(), "macos");
  EXPECT_EQ(response.backend(), v1::SANDBOX_BACKEND_NATIVE);
  EXPECT_TRUE(response.bwrap_argv().empty());
  const std::string& profile = response.seatbelt_profile();
  EXPECT_EQ(profile.rfind("(version 1)\n", 0), 0u) << profile;
  EXPECT_NE(profile.find("(allow file-write* (subpath \"" + work_ + "\"))"), std::string::npos)
      << profile;
  EXPECT_NE(profile.find(R"((deny file-write* (subpath "/private/tmp/kept \"(x)\"")))"),
            std::string::npos)
      << profile;
  EXPECT_NE(profile.find(R"((allow network-outbound (remote ip "localhost:<HTTP PROXY PORT>")))"),
            std::string::npos)
      << profile;
  EXPECT_TRUE(
      std::any_of(response.notes().begin(), response.notes().end(), [](const std::string& note) {
        return note.find("NOT yet run on a Mac") != std::string::npos;
      }));

  // The same refusals as a Launch, and a microVM is not a macOS plan.
  v1::LaunchRequest bad = LaunchRequest("bad");
  bad.mutable_spec()->set_mode("bogus");
  EXPECT_EQ(RenderPlan(bad, &response, "macos").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  v1::LaunchRequest vm = LaunchRequest("vm");
  vm.set_backend("microvm");
  EXPECT_FALSE(RenderPlan(vm, &response, "macos").ok());
  EXPECT_EQ(RenderPlan(LaunchRequest("win"), &response, "windows").error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(RenderPlanTest, ShowsTheDenySetsOfAWritableBindAndStartsNothing) {
  launcher_->Start();
  StartBroker();
  const std::string git = work_ + "/.git", hooks = git + "/hooks", env = work_ + "/.env";
  ASSERT_EQ(mkdir(git.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(hooks.c_str(), 0755), 0);
  const int fd = open(env.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  v1::LaunchRequest request = LaunchRequest("planned");
  request.mutable_spec()->add_egress_allowlist("example.com:8443");

  v1::RenderPlanResponse response;
  grpc::Status status = RenderPlan(request, &response);
  unlink(env.c_str());
  rmdir(hooks.c_str());
  rmdir(git.c_str());
  ASSERT_TRUE(status.ok()) << status.error_message();

  EXPECT_EQ(response.platform(), "linux");
  EXPECT_EQ(response.backend(), v1::SANDBOX_BACKEND_NATIVE);
  EXPECT_TRUE(Has(response.deny_write_paths(), hooks)) << response.DebugString();
  EXPECT_TRUE(Has(response.deny_write_paths(), env)) << response.DebugString();
  EXPECT_TRUE(response.create_guard());
  EXPECT_TRUE(Has(response.create_guard_patterns(), ".env"));
  EXPECT_TRUE(response.network_enabled());
  EXPECT_TRUE(Has(response.egress_allow_entries(), "example.com:8443")) << response.DebugString();
  // The argv: the bind writable, the hooks read-only over it, the placeholders said so.
  const auto& argv = response.bwrap_argv();
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv[0], "bwrap");
  EXPECT_EQ(argv[argv.size() - 1], "<COMMAND>");
  auto bind = std::find(argv.begin(), argv.end(), "--bind");
  ASSERT_NE(bind, argv.end());
  EXPECT_EQ(*(bind + 1), work_);
  bool hooks_read_only = false;
  for (int i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "--ro-bind" && argv[i + 1] == hooks) hooks_read_only = true;
  }
  EXPECT_TRUE(hooks_read_only) << response.DebugString();
  EXPECT_TRUE(Has(argv, "<HTTP PROXY SOCKET>"));
  EXPECT_FALSE(response.notes().empty());

  // Nothing started: no session, no proxies' directory, no run on the launcher.
  EXPECT_TRUE(ListSessions().empty());
  EXPECT_EQ(EgressDirs(), 0);
  v1::SandboxHandle handle;
  EXPECT_EQ(GetSession("planned", &handle).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(RenderPlanTest, TheNoneBackendHasNoArgvAndSaysWhy) {
  launcher_->Start();
  StartBroker();
  v1::RenderPlanResponse response;
  grpc::Status status = RenderPlan(LaunchRequest("host", "none"), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.backend(), v1::SANDBOX_BACKEND_NONE);
  EXPECT_TRUE(response.bwrap_argv().empty());
  EXPECT_TRUE(response.deny_write_paths().empty());
  ASSERT_FALSE(response.notes().empty());
  EXPECT_NE(response.notes(0).find("unconfined"), std::string::npos);
  EXPECT_TRUE(ListSessions().empty());
}

}  // namespace
}  // namespace ccsandbox::broker::testing
