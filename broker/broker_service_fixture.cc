#include "broker/broker_service_fixture.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "broker/launcher_link.h"
#include "policy/plan/bind_checks.h"
#include "proto/grpc_limits.h"

namespace ccsandbox::broker::testing {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// The entries of a directory (none when it does not exist).
int Entries(const std::string& path) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return 0;
  int count = 0;
  while (dirent* entry = readdir(dir)) {
    if (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..") ++count;
  }
  closedir(dir);
  return count;
}

}  // namespace

v1::ExecRequest Request(const std::string& session, std::vector<std::string> argv) {
  v1::ExecRequest request;
  request.set_session_id(session);
  for (std::string& arg : argv) request.add_argv(std::move(arg));
  return request;
}

void BrokerServiceTest::SetUp() {
  // Short paths: Unix socket names must stay under 108 bytes.
  char root[] = "/tmp/broker-service-test-XXXXXX";
  ASSERT_NE(mkdtemp(root), nullptr);
  root_ = root;
  work_ = root_ + "/work";
  ASSERT_EQ(mkdir(work_.c_str(), 0700), 0);
  ASSERT_EQ(mkdir((root_ + "/launcher").c_str(), 0700), 0);
  absl::StatusOr<std::unique_ptr<RuntimeDir>> runtime = RuntimeDir::Open(root_ + "/run");
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  runtime_dir_ = *std::move(runtime);
  launcher_ = std::make_unique<LauncherServer>(root_ + "/launcher/sock");
}

void BrokerServiceTest::TearDown() {
  StopBroker();
  broker_.reset();
  runtime_dir_.reset();
  launcher_.reset();
  for (const std::string& path : {root_ + "/launcher/sock", root_ + "/launcher", work_, root_}) {
    (void)(unlink(path.c_str()) == 0 || rmdir(path.c_str()) == 0);
  }
  EXPECT_FALSE(Exists(root_)) << "the broker left files behind";
}

void BrokerServiceTest::StartBroker(bool sandbox_enabled) {
  BrokerConfig config;
  config.host.sandbox_enabled = sandbox_enabled;
  config.host.probe.set_available(true);
  config.host.probe.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  config.host.probe.set_note("the test's host");
  config.status_line = "broker under test";
  config.launcher_address = launcher_address();
  config.host_env = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/root"}};
  config.proxy_loop = &loop_;
  config.resolver = resolver_;
  config.runtime_dir = runtime_dir_.get();
  config.forbidden_dirs = policy::ControlPlaneDirs();
  config.forbidden_dirs.push_back({root_ + "/launcher", "the launcher's socket directory"});
  config.forbidden_dirs.push_back({root_ + "/run", "the broker's runtime directory"});
  broker_ = std::make_unique<BrokerService>(config, ConnectLauncher(launcher_address()));
  grpc::ServerBuilder builder;
  ApplyServerLimits(builder);  // as the daemon's
  builder.RegisterService(broker_.get());
  broker_server_ = builder.BuildAndStart();
  ASSERT_NE(broker_server_, nullptr);
  grpc::ChannelArguments args;
  ApplyChannelLimits(args);
  stub_ = v1::SandboxBroker::NewStub(broker_server_->InProcessChannel(args));
}

int BrokerServiceTest::EgressDirs() { return Entries(root_ + "/run/s"); }

}  // namespace ccsandbox::broker::testing
