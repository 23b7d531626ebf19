// BrokerService against a fake launcher: the session state machine, one-shot sessions, a
// launcher that goes away mid-run or restarts, the labels on every event, Kill and Destroy
// reaching the launcher's Signal, and refusals of bad input. Nothing is run and no bwrap is
// needed: the fake plays the launcher's side of the contract (starting -> ready -> stdout /
// stderr -> exit | killed; a cancelled call kills its run; Signal reaches a registered run).
//
// The fake is a SandboxLauncher service on a Unix socket, reached through the daemon's own
// LauncherLink (ConnectLauncher): the broker's relay reads the launcher's stream with gRPC's
// asynchronous API and ends a run by cancelling its ClientContext, which a hand-written
// StubInterface could neither drive nor observe. Serving the fake over a real channel keeps the
// relay, the cancellation and the reconnect-after-restart path exactly the daemon's.
#include "broker/broker_service.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "broker/launcher_link.h"
#include "broker/runtime_dir.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "policy/plan/bind_checks.h"
#include "proto/grpc_limits.h"
#include "proto/launcher.grpc.pb.h"
#include "proto/sandbox.grpc.pb.h"
#include "proxy/event_loop.h"
#include "proxy/static_resolver.h"

namespace ccsandbox::broker {
namespace {

using grpc::StatusCode;

constexpr int kFakePid = 4242;
constexpr char kLostMessage[] = "the fake launcher is going away";

// The launcher's side of the contract, with "programs" chosen by argv[0]:
//   exit [CODE]  starting, ready, "out\n" on stdout, "err\n" on stderr, exit CODE (default 0)
//   hold         starting, ready, then waits: a Signal ends it with killed (the signal's reason
//                and number), a cancelled call ends it with CANCELLED (the launcher kills it)
//   lose         starting, ready, then the call fails with UNAVAILABLE, as when the launcher
//                goes away mid-run
// Every event is labelled with a wrong session id and backend: labelling is the broker's job.
class FakeLauncher final : public v1::SandboxLauncher::Service {
 public:
  explicit FakeLauncher(v1::LauncherProbeResponse probe) : probe_(std::move(probe)) {}

  grpc::Status Probe(grpc::ServerContext*, const v1::LauncherProbeRequest*,
                     v1::LauncherProbeResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++probes_;
    *response = probe_;
    return grpc::Status::OK;
  }

  grpc::Status Run(grpc::ServerContext* context, const v1::LaunchPlan* plan,
                   grpc::ServerWriter<v1::SandboxEvent>* writer) override {
    const std::string program = plan->argv_size() > 0 ? plan->argv(0) : "";
    const std::string& run_id = plan->run_id();
    {
      absl::MutexLock lock(&mu_);
      plans_.push_back(*plan);
      // Registered before its first event, as the launcher does: a Kill sent once the client
      // has seen `ready` finds the run.
      if (program == "hold") held_[run_id] = std::nullopt;
    }
    auto emit = [&](v1::SandboxEvent event) {
      event.set_session_id(absl::StrCat("not-", plan->session_id()));
      event.set_backend(plan->backend() == v1::SANDBOX_BACKEND_NATIVE ? v1::SANDBOX_BACKEND_NONE
                                                                      : v1::SANDBOX_BACKEND_NATIVE);
      writer->Write(event);
    };
    v1::SandboxEvent event;
    event.mutable_starting()->set_run_id(run_id);
    emit(event);
    event.Clear();
    event.mutable_ready()->set_pid(kFakePid);
    emit(event);
    if (program == "lose") return grpc::Status(StatusCode::UNAVAILABLE, kLostMessage);
    if (program == "hold") {
      std::optional<v1::SignalRequest> signal;
      {
        absl::MutexLock lock(&mu_);
        auto signalled = [&] { return held_[run_id].has_value() || context->IsCancelled(); };
        // Cancellation comes without a notification: look again every few milliseconds.
        while (!mu_.AwaitWithTimeout(absl::Condition(&signalled), absl::Milliseconds(5))) {
        }
        signal = held_[run_id];
        held_.erase(run_id);
        outcomes_[run_id] = signal.has_value() ? "signalled" : "cancelled";
      }
      if (!signal.has_value()) return grpc::Status(StatusCode::CANCELLED, "run cancelled");
      event.Clear();
      event.mutable_killed()->set_reason(signal->reason());
      event.mutable_killed()->set_signal(signal->signal());
      emit(event);
      return grpc::Status::OK;
    }
    event.Clear();
    event.set_stdout("out\n");
    emit(event);
    event.Clear();
    event.set_stderr("err\n");
    emit(event);
    event.Clear();
    event.mutable_exit()->set_exit_code(plan->argv_size() > 1 ? std::stoi(plan->argv(1)) : 0);
    emit(event);
    return grpc::Status::OK;
  }

  grpc::Status Signal(grpc::ServerContext*, const v1::SignalRequest* request,
                      v1::SignalResponse* response) override {
    absl::MutexLock lock(&mu_);
    signals_.push_back(*request);
    auto run = held_.find(request->run_id());
    if (miss_signals_ || run == held_.end()) {
      response->set_delivered(false);
      return grpc::Status(StatusCode::NOT_FOUND, "no such run");
    }
    run->second = *request;
    response->set_delivered(true);
    return grpc::Status::OK;
  }

  // Signal answers as for a run it has not registered yet.
  void MissSignals() {
    absl::MutexLock lock(&mu_);
    miss_signals_ = true;
  }
  std::vector<v1::LaunchPlan> plans() {
    absl::MutexLock lock(&mu_);
    return plans_;
  }
  std::vector<v1::SignalRequest> signals() {
    absl::MutexLock lock(&mu_);
    return signals_;
  }
  // How a held run ended, "signalled" or "cancelled", once it has ("" after 10 s). A cancelled
  // call ends on the broker's side without waiting for the launcher to have seen it.
  std::string AwaitOutcome(const std::string& run_id) {
    absl::MutexLock lock(&mu_);
    auto ended = [&] { return outcomes_.count(run_id) > 0; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ended), absl::Seconds(10))) return "";
    return outcomes_[run_id];
  }
  int probes() {
    absl::MutexLock lock(&mu_);
    return probes_;
  }

 private:
  absl::Mutex mu_;
  const v1::LauncherProbeResponse probe_;
  int probes_ ABSL_GUARDED_BY(mu_) = 0;
  bool miss_signals_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<v1::LaunchPlan> plans_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::SignalRequest> signals_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::optional<v1::SignalRequest>> held_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> outcomes_ ABSL_GUARDED_BY(mu_);
};

v1::LauncherProbeResponse GuardAvailable() {
  v1::LauncherProbeResponse probe;
  probe.set_create_guard_available(true);
  probe.set_create_guard_reason("enforced by the fake launcher");
  return probe;
}

// The fake launcher's server; Stop and Start again on the same socket is a launcher restart.
class LauncherServer {
 public:
  explicit LauncherServer(std::string socket) : socket_(std::move(socket)) {}
  ~LauncherServer() { Stop(); }

  void Start(v1::LauncherProbeResponse probe = GuardAvailable()) {
    fake_ = std::make_unique<FakeLauncher>(std::move(probe));
    grpc::ServerBuilder builder;
    ApplyServerLimits(builder);
    builder.AddListeningPort(absl::StrCat("unix:", socket_), grpc::InsecureServerCredentials());
    builder.RegisterService(fake_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  // In-flight calls are cancelled; returns once their handlers have.
  void Stop() {
    if (server_ == nullptr) return;
    server_->Shutdown(std::chrono::system_clock::now());
    server_.reset();
  }
  FakeLauncher& fake() { return *fake_; }

 private:
  const std::string socket_;
  std::unique_ptr<FakeLauncher> fake_;
  std::unique_ptr<grpc::Server> server_;
};

// An Exec stream read by the test at its own pace.
class OpenExec {
 public:
  OpenExec(v1::SandboxBroker::Stub& stub, const v1::ExecRequest& request)
      : reader_(stub.Exec(&context_, request)) {}

  // Reads up to and including the `ready` event; false if the stream ended first.
  bool ReadUntilReady() {
    v1::SandboxEvent event;
    while (reader_->Read(&event)) {
      events_.push_back(event);
      if (event.has_ready()) return true;
    }
    return false;
  }
  // Reads the rest and returns the call's status.
  grpc::Status Finish() {
    v1::SandboxEvent event;
    while (reader_->Read(&event)) events_.push_back(event);
    return reader_->Finish();
  }
  void Cancel() { context_.TryCancel(); }
  const std::vector<v1::SandboxEvent>& events() const { return events_; }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader_;
  std::vector<v1::SandboxEvent> events_;
};

v1::ExecRequest Request(const std::string& session, std::vector<std::string> argv) {
  v1::ExecRequest request;
  request.set_session_id(session);
  for (std::string& arg : argv) request.add_argv(std::move(arg));
  return request;
}

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

class BrokerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
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

  void TearDown() override {
    StopBroker();
    broker_.reset();
    runtime_dir_.reset();
    launcher_.reset();
    for (const std::string& path : {root_ + "/launcher/sock", root_ + "/launcher", work_, root_}) {
      (void)(unlink(path.c_str()) == 0 || rmdir(path.c_str()) == 0);
    }
    EXPECT_FALSE(Exists(root_)) << "the broker left files behind";
  }

  // A broker on a host whose probe found the native backend, its launcher the fake.
  void StartBroker(bool sandbox_enabled = true) {
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

  // Returns once every call in flight has returned: what a handler does after its client has
  // gone (a one-shot session's Destroy) has happened by then. The service's own methods still
  // answer (Direct*).
  void StopBroker() {
    if (broker_server_ == nullptr) return;
    stub_.reset();
    broker_server_->Shutdown();
    broker_server_.reset();
  }

  std::string launcher_address() const { return absl::StrCat("unix:", root_, "/launcher/sock"); }

  v1::LaunchRequest LaunchRequest(const std::string& id, const std::string& backend = "") {
    v1::LaunchRequest request;
    request.set_backend(backend);
    request.mutable_spec()->set_session_id(id);
    v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
    bind->set_host_path(work_);
    bind->set_guest_path(work_);
    return request;
  }

  grpc::Status Launch(const v1::LaunchRequest& request, v1::SandboxHandle* handle) {
    grpc::ClientContext context;
    return stub_->Launch(&context, request, handle);
  }
  v1::SandboxHandle Launch(const std::string& id, const std::string& backend = "") {
    v1::SandboxHandle handle;
    grpc::Status status = Launch(LaunchRequest(id, backend), &handle);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return handle;
  }

  struct Stream {
    std::vector<v1::SandboxEvent> events;
    grpc::Status status;
  };
  Stream Exec(const v1::ExecRequest& request) {
    OpenExec exec(*stub_, request);
    grpc::Status status = exec.Finish();
    return {exec.events(), status};
  }

  grpc::Status GetSession(const std::string& id, v1::SandboxHandle* handle) {
    grpc::ClientContext context;
    v1::SessionRequest request;
    request.set_session_id(id);
    return stub_->GetSession(&context, request, handle);
  }
  v1::SandboxState StateOf(const std::string& id) {
    v1::SandboxHandle handle;
    grpc::Status status = GetSession(id, &handle);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return handle.state();
  }
  std::vector<v1::SandboxHandle> ListSessions() {
    grpc::ClientContext context;
    v1::ListSessionsResponse response;
    EXPECT_TRUE(stub_->ListSessions(&context, v1::ListSessionsRequest(), &response).ok());
    return {response.sessions().begin(), response.sessions().end()};
  }
  grpc::Status Destroy(const std::string& id, v1::SandboxHandle* handle) {
    grpc::ClientContext context;
    v1::SessionRequest request;
    request.set_session_id(id);
    return stub_->Destroy(&context, request, handle);
  }
  grpc::Status Kill(const std::string& id, const std::string& reason, int* runs_signalled) {
    grpc::ClientContext context;
    v1::KillRequest request;
    request.set_session_id(id);
    request.set_reason(reason);
    v1::KillResponse response;
    grpc::Status status = stub_->Kill(&context, request, &response);
    *runs_signalled = response.runs_signalled();
    return status;
  }
  // GetSession on the service itself, for after StopBroker.
  grpc::Status DirectGetSession(const std::string& id) {
    grpc::ServerContext context;
    v1::SessionRequest request;
    request.set_session_id(id);
    v1::SandboxHandle handle;
    return broker_->GetSession(&context, &request, &handle);
  }
  // Session directories (proxy sockets) in the runtime dir.
  int EgressDirs() { return Entries(root_ + "/run/s"); }

  FakeLauncher& fake() { return launcher_->fake(); }

  std::string root_;
  std::string work_;
  proxy::EventLoop loop_;
  std::shared_ptr<proxy::StaticResolver> resolver_ = std::make_shared<proxy::StaticResolver>();
  std::unique_ptr<RuntimeDir> runtime_dir_;
  std::unique_ptr<LauncherServer> launcher_;
  std::unique_ptr<BrokerService> broker_;
  std::unique_ptr<grpc::Server> broker_server_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
};

TEST_F(BrokerServiceTest, SessionStatesFollowLaunchExecAndDestroy) {
  launcher_->Start();
  StartBroker();
  const v1::SandboxHandle launched = Launch("states");
  EXPECT_EQ(launched.session_id(), "states");
  EXPECT_EQ(launched.state(), v1::SANDBOX_STATE_WARM);  // never CREATED: Launch is synchronous
  EXPECT_EQ(StateOf("states"), v1::SANDBOX_STATE_WARM);
  ASSERT_EQ(ListSessions().size(), 1u);
  EXPECT_EQ(ListSessions()[0].session_id(), "states");

  OpenExec held(*stub_, Request("states", {"hold"}));
  ASSERT_TRUE(held.ReadUntilReady());
  EXPECT_EQ(StateOf("states"), v1::SANDBOX_STATE_ACTIVE);
  EXPECT_EQ(ListSessions()[0].state(), v1::SANDBOX_STATE_ACTIVE);
  // Another run ending leaves the session active while the first goes on.
  Stream other = Exec(Request("states", {"exit"}));
  ASSERT_TRUE(other.status.ok()) << other.status.error_message();
  EXPECT_EQ(StateOf("states"), v1::SANDBOX_STATE_ACTIVE);
  int signalled = 0;
  ASSERT_TRUE(Kill("states", "", &signalled).ok());
  EXPECT_EQ(signalled, 1);
  ASSERT_TRUE(held.Finish().ok());
  EXPECT_EQ(StateOf("states"), v1::SANDBOX_STATE_WARM);

  v1::SandboxHandle destroyed;
  ASSERT_TRUE(Destroy("states", &destroyed).ok());
  EXPECT_EQ(destroyed.session_id(), "states");
  EXPECT_EQ(destroyed.state(), v1::SANDBOX_STATE_DESTROYED);
  EXPECT_EQ(destroyed.backend(), v1::SANDBOX_BACKEND_NATIVE);
  EXPECT_TRUE(ListSessions().empty());
  EXPECT_EQ(EgressDirs(), 0) << "the session's proxies outlived it";

  // A destroyed session is unknown to every call; the launcher is not asked.
  const size_t runs = fake().plans().size();
  v1::SandboxHandle handle;
  int count = 0;
  const std::vector<std::pair<std::string, std::function<grpc::Status()>>> calls = {
      {"GetSession", [&] { return GetSession("states", &handle); }},
      {"Destroy", [&] { return Destroy("states", &handle); }},
      {"Kill", [&] { return Kill("states", "", &count); }},
      {"Exec", [&] { return Exec(Request("states", {"exit"})).status; }},
      {"Exec of a session never launched", [&] { return Exec(Request("never", {"exit"})).status; }},
  };
  for (const auto& [name, call] : calls) {
    const grpc::Status status = call();
    EXPECT_EQ(status.error_code(), StatusCode::NOT_FOUND) << name;
    EXPECT_TRUE(absl::StartsWith(status.error_message(), "sessionId: "))
        << name << ": " << status.error_message();
  }
  EXPECT_EQ(fake().plans().size(), runs);
}

TEST_F(BrokerServiceTest, ALaunchedSessionIdIsTaken) {
  launcher_->Start();
  StartBroker();
  Launch("twice", "none");
  v1::SandboxHandle handle;
  grpc::Status again = Launch(LaunchRequest("twice", "none"), &handle);
  EXPECT_EQ(again.error_code(), StatusCode::ALREADY_EXISTS);
  EXPECT_TRUE(absl::StartsWith(again.error_message(), "sessionId: ")) << again.error_message();
  // Native: the duplicate is refused when its proxies would start (a message that does not
  // name sessionId); the first session's proxies stay.
  Launch("twice-native");
  EXPECT_EQ(EgressDirs(), 1);
  EXPECT_EQ(Launch(LaunchRequest("twice-native"), &handle).error_code(),
            StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(EgressDirs(), 1);
  EXPECT_EQ(ListSessions().size(), 2u);
}

// How a one-shot Exec ends; the session is gone afterwards in every case.
enum class OneShotEnd { kExits, kKilled, kLauncherLost, kClientCancels, kRefused };

struct OneShotCase {
  std::string name;
  OneShotEnd end;
  std::string backend;
};

void PrintTo(const OneShotCase& c, std::ostream* os) { *os << c.name; }

class OneShotTest : public BrokerServiceTest, public ::testing::WithParamInterface<OneShotCase> {};

TEST_P(OneShotTest, TheSessionIsGoneAfterItsExec) {
  const OneShotCase& c = GetParam();
  launcher_->Start();
  StartBroker();
  Launch("once", c.backend);
  EXPECT_EQ(EgressDirs(), c.backend == "none" ? 0 : 1);
  v1::ExecRequest request =
      Request("once", c.end == OneShotEnd::kExits          ? std::vector<std::string>{"exit", "3"}
                      : c.end == OneShotEnd::kLauncherLost ? std::vector<std::string>{"lose"}
                      : c.end == OneShotEnd::kRefused      ? std::vector<std::string>{}
                                                           : std::vector<std::string>{"hold"});
  request.set_destroy_session_after(true);
  OpenExec exec(*stub_, request);
  switch (c.end) {
    case OneShotEnd::kExits:
    case OneShotEnd::kLauncherLost: {
      grpc::Status status = exec.Finish();
      ASSERT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(exec.events().back().has_exit(), c.end == OneShotEnd::kExits);
      EXPECT_EQ(exec.events().back().has_killed(), c.end == OneShotEnd::kLauncherLost);
      break;
    }
    case OneShotEnd::kKilled: {
      ASSERT_TRUE(exec.ReadUntilReady());
      int signalled = 0;
      ASSERT_TRUE(Kill("once", "stop", &signalled).ok());
      EXPECT_EQ(signalled, 1);
      ASSERT_TRUE(exec.Finish().ok());
      EXPECT_TRUE(exec.events().back().has_killed());
      break;
    }
    case OneShotEnd::kClientCancels:
      ASSERT_TRUE(exec.ReadUntilReady());
      exec.Cancel();
      EXPECT_EQ(exec.Finish().error_code(), StatusCode::CANCELLED);
      break;
    case OneShotEnd::kRefused: {
      grpc::Status status = exec.Finish();
      EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT) << status.error_message();
      EXPECT_TRUE(fake().plans().empty());
      break;
    }
  }
  StopBroker();  // waits for the Exec handler, which destroys the session after its client went
  EXPECT_EQ(DirectGetSession("once").error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(EgressDirs(), 0) << "the one-shot session's proxies outlived it";
  if (c.end == OneShotEnd::kClientCancels) {
    // The client's going reached the launcher as a cancelled call, which kills the run there.
    ASSERT_EQ(fake().plans().size(), 1u);
    EXPECT_EQ(fake().AwaitOutcome(fake().plans()[0].run_id()), "cancelled");
    EXPECT_TRUE(fake().signals().empty());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ends, OneShotTest,
    ::testing::Values(OneShotCase{"Exits", OneShotEnd::kExits, ""},
                      OneShotCase{"ExitsOnNone", OneShotEnd::kExits, "none"},
                      OneShotCase{"Killed", OneShotEnd::kKilled, ""},
                      OneShotCase{"LauncherLost", OneShotEnd::kLauncherLost, ""},
                      OneShotCase{"ClientCancels", OneShotEnd::kClientCancels, ""},
                      OneShotCase{"ClientCancelsOnNone", OneShotEnd::kClientCancels, "none"},
                      OneShotCase{"RefusedBeforeItRan", OneShotEnd::kRefused, ""}),
    [](const ::testing::TestParamInfo<OneShotCase>& info) { return info.param.name; });

TEST_F(BrokerServiceTest, ALauncherLostMidRunEndsTheRunKilledAndTheSessionGoesOn) {
  launcher_->Start();
  StartBroker();
  Launch("lost");
  Stream lost = Exec(Request("lost", {"lose"}));
  ASSERT_TRUE(lost.status.ok()) << lost.status.error_message();
  ASSERT_EQ(lost.events.size(), 3u);
  EXPECT_TRUE(lost.events[0].has_starting());
  EXPECT_TRUE(lost.events[1].has_ready());
  ASSERT_TRUE(lost.events[2].has_killed());
  EXPECT_EQ(lost.events[2].killed().reason(),
            absl::StrCat("launcher connection lost: ", kLostMessage));
  EXPECT_EQ(lost.events[2].killed().signal(), SIGKILL);
  EXPECT_EQ(StateOf("lost"), v1::SANDBOX_STATE_WARM);
  Stream again = Exec(Request("lost", {"exit"}));
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_EQ(again.events.back().exit().exit_code(), 0);
}

TEST_F(BrokerServiceTest, ARestartedLauncherEndsItsRunsKilledAndIsReconnected) {
  launcher_->Start();
  StartBroker();
  Launch("restart");
  OpenExec held(*stub_, Request("restart", {"hold"}));
  ASSERT_TRUE(held.ReadUntilReady());
  launcher_->Stop();
  launcher_->Start();
  grpc::Status status = held.Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(held.events().size(), 3u);
  ASSERT_TRUE(held.events().back().has_killed());
  EXPECT_TRUE(absl::StartsWith(held.events().back().killed().reason(), "launcher connection lost"))
      << held.events().back().killed().reason();
  EXPECT_EQ(held.events().back().killed().signal(), SIGKILL);
  EXPECT_EQ(StateOf("restart"), v1::SANDBOX_STATE_WARM);
  // The next run reaches the new launcher over the same channel.
  Stream again = Exec(Request("restart", {"exit", "7"}));
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_EQ(again.events.back().exit().exit_code(), 7);
  EXPECT_EQ(fake().plans().size(), 1u);
}

TEST_F(BrokerServiceTest, AnAbsentLauncherIsUnavailableNamingItsAddressUntilItIsBack) {
  launcher_->Start();
  StartBroker();
  Launch("absent");
  launcher_->Stop();
  Stream refused = Exec(Request("absent", {"exit"}));
  EXPECT_EQ(refused.status.error_code(), StatusCode::UNAVAILABLE);
  EXPECT_EQ(refused.status.error_message(),
            absl::StrCat("launcher not reachable at ", launcher_address()));
  EXPECT_TRUE(refused.events.empty());
  EXPECT_EQ(StateOf("absent"), v1::SANDBOX_STATE_WARM);
  launcher_->Start();
  Stream again = Exec(Request("absent", {"exit"}));
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  EXPECT_EQ(again.events.back().exit().exit_code(), 0);
}

struct LabelCase {
  std::string name;
  std::string requested;  // LaunchRequest.backend
  std::string program;
  v1::SandboxBackend requested_backend;
  v1::SandboxBackend actual;
};

void PrintTo(const LabelCase& c, std::ostream* os) { *os << c.name; }

class LabelTest : public BrokerServiceTest, public ::testing::WithParamInterface<LabelCase> {};

TEST_P(LabelTest, EveryEventCarriesTheSessionAndItsActualBackend) {
  const LabelCase& c = GetParam();
  launcher_->Start();
  StartBroker();
  const v1::SandboxHandle handle = Launch("labels", c.requested);
  EXPECT_EQ(handle.requested_backend(), c.requested_backend);
  EXPECT_EQ(handle.backend(), c.actual);
  Stream run = Exec(Request("labels", {c.program}));
  ASSERT_TRUE(run.status.ok()) << run.status.error_message();
  // In the launcher's order, then the broker's own killed event if the launcher went away.
  std::vector<v1::SandboxEvent::EventCase> kinds;
  for (const v1::SandboxEvent& event : run.events) kinds.push_back(event.event_case());
  EXPECT_EQ(
      kinds,
      c.program == "exit"
          ? (std::vector<v1::SandboxEvent::EventCase>{
                v1::SandboxEvent::kStarting, v1::SandboxEvent::kReady, v1::SandboxEvent::kStdout,
                v1::SandboxEvent::kStderr, v1::SandboxEvent::kExit})
          : (std::vector<v1::SandboxEvent::EventCase>{
                v1::SandboxEvent::kStarting, v1::SandboxEvent::kReady, v1::SandboxEvent::kKilled}));
  // The fake labels every event wrongly; none of that reaches the client.
  for (const v1::SandboxEvent& event : run.events) {
    EXPECT_EQ(event.session_id(), "labels") << event.DebugString();
    EXPECT_EQ(event.backend(), c.actual) << event.DebugString();
  }
  ASSERT_EQ(fake().plans().size(), 1u);
  EXPECT_EQ(fake().plans()[0].backend(), c.actual);
  EXPECT_EQ(fake().plans()[0].session_id(), "labels");
}

INSTANTIATE_TEST_SUITE_P(
    Backends, LabelTest,
    ::testing::Values(LabelCase{"DispatchDefault", "", "exit", v1::SANDBOX_BACKEND_UNSPECIFIED,
                                v1::SANDBOX_BACKEND_NATIVE},
                      LabelCase{"Docker", "docker", "exit", v1::SANDBOX_BACKEND_NATIVE,
                                v1::SANDBOX_BACKEND_NATIVE},
                      LabelCase{"None", "none", "exit", v1::SANDBOX_BACKEND_NONE,
                                v1::SANDBOX_BACKEND_NONE},
                      // The killed event the broker makes itself is labelled too.
                      LabelCase{"NativeLauncherLost", "", "lose", v1::SANDBOX_BACKEND_UNSPECIFIED,
                                v1::SANDBOX_BACKEND_NATIVE},
                      LabelCase{"NoneLauncherLost", "none", "lose", v1::SANDBOX_BACKEND_NONE,
                                v1::SANDBOX_BACKEND_NONE}),
    [](const ::testing::TestParamInfo<LabelCase>& info) { return info.param.name; });

TEST_F(BrokerServiceTest, ADisabledSandboxRunsTheDefaultOnNoneAndRefusesNative) {
  launcher_->Start();
  StartBroker(/*sandbox_enabled=*/false);
  EXPECT_EQ(Launch("off").backend(), v1::SANDBOX_BACKEND_NONE);
  v1::SandboxHandle handle;
  grpc::Status native = Launch(LaunchRequest("off-native", "native"), &handle);
  EXPECT_EQ(native.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StartsWith(native.error_message(), "backend: ")) << native.error_message();
  Stream run = Exec(Request("off", {"exit"}));
  ASSERT_TRUE(run.status.ok());
  for (const v1::SandboxEvent& event : run.events) {
    EXPECT_EQ(event.backend(), v1::SANDBOX_BACKEND_NONE);
  }
  EXPECT_EQ(fake().probes(), 0) << "the create guard matters to native sessions only";
}

struct KillCase {
  std::string name;
  std::string reason;    // KillRequest.reason
  bool signal_misses;    // the launcher has not registered the run (Signal: NOT_FOUND)
  std::string expected;  // the reason the launcher and the client see
};

void PrintTo(const KillCase& c, std::ostream* os) { *os << c.name; }

class KillTest : public BrokerServiceTest, public ::testing::WithParamInterface<KillCase> {};

TEST_P(KillTest, KillEndsTheRunThroughTheLaunchersSignal) {
  const KillCase& c = GetParam();
  launcher_->Start();
  StartBroker();
  Launch("kill");
  int signalled = -1;
  ASSERT_TRUE(Kill("kill", c.reason, &signalled).ok());
  EXPECT_EQ(signalled, 0) << "no run yet";
  EXPECT_TRUE(fake().signals().empty());

  if (c.signal_misses) fake().MissSignals();
  OpenExec held(*stub_, Request("kill", {"hold"}));
  ASSERT_TRUE(held.ReadUntilReady());
  ASSERT_TRUE(Kill("kill", c.reason, &signalled).ok());
  EXPECT_EQ(signalled, 1);
  grpc::Status status = held.Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();

  ASSERT_EQ(fake().plans().size(), 1u);
  const std::string run_id = fake().plans()[0].run_id();
  EXPECT_TRUE(absl::StartsWith(run_id, "kill-")) << run_id;
  EXPECT_EQ(held.events()[0].starting().run_id(), run_id);
  ASSERT_EQ(fake().signals().size(), 1u);
  EXPECT_EQ(fake().signals()[0].run_id(), run_id);
  EXPECT_EQ(fake().signals()[0].signal(), SIGKILL);
  EXPECT_EQ(fake().signals()[0].reason(), c.expected);
  // A Signal that missed the run ends its launcher call instead, which kills it there.
  EXPECT_EQ(fake().AwaitOutcome(run_id), c.signal_misses ? "cancelled" : "signalled");
  ASSERT_TRUE(held.events().back().has_killed());
  EXPECT_EQ(held.events().back().killed().reason(), c.expected);
  EXPECT_EQ(held.events().back().killed().signal(), SIGKILL);
  EXPECT_EQ(StateOf("kill"), v1::SANDBOX_STATE_WARM);
}

INSTANTIATE_TEST_SUITE_P(
    Reasons, KillTest,
    ::testing::Values(KillCase{"NoReason", "", false, "killed by request"},
                      KillCase{"WithReason", "enough", false, "killed: enough"},
                      KillCase{"SignalMissesTheRun", "enough", true, "killed: enough"}),
    [](const ::testing::TestParamInfo<KillCase>& info) { return info.param.name; });

TEST_F(BrokerServiceTest, DestroyKillsTheRunsInFlight) {
  launcher_->Start();
  StartBroker();
  Launch("doomed");
  OpenExec first(*stub_, Request("doomed", {"hold"}));
  ASSERT_TRUE(first.ReadUntilReady());
  OpenExec second(*stub_, Request("doomed", {"hold"}));
  ASSERT_TRUE(second.ReadUntilReady());
  v1::SandboxHandle destroyed;
  ASSERT_TRUE(Destroy("doomed", &destroyed).ok());
  EXPECT_EQ(destroyed.state(), v1::SANDBOX_STATE_DESTROYED);
  for (OpenExec* exec : {&first, &second}) {
    grpc::Status status = exec->Finish();
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_TRUE(exec->events().back().has_killed());
    EXPECT_EQ(exec->events().back().killed().reason(), "session destroyed");
  }
  ASSERT_EQ(fake().signals().size(), 2u);
  for (const v1::SignalRequest& signal : fake().signals()) {
    EXPECT_EQ(signal.signal(), SIGKILL);
    EXPECT_EQ(signal.reason(), "session destroyed");
  }
  EXPECT_NE(fake().signals()[0].run_id(), fake().signals()[1].run_id());
  v1::SandboxHandle handle;
  EXPECT_EQ(GetSession("doomed", &handle).error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(EgressDirs(), 0);
}

TEST_F(BrokerServiceTest, ThePlanCarriesTheSessionsEgressGuardAndForbiddenDirs) {
  launcher_->Start();
  StartBroker();
  Launch("plan");
  v1::ExecRequest request = Request("plan", {"exit", "0", "arg"});
  request.set_stdin("input");
  request.set_timeout_ms(1234);
  ASSERT_TRUE(Exec(request).status.ok());
  ASSERT_EQ(fake().plans().size(), 1u);
  const v1::LaunchPlan plan = fake().plans()[0];
  EXPECT_EQ(std::vector<std::string>(plan.argv().begin(), plan.argv().end()),
            (std::vector<std::string>{"exit", "0", "arg"}));
  EXPECT_EQ(plan.stdin(), "input");
  EXPECT_EQ(plan.timeout_ms(), 1234u);
  EXPECT_TRUE(absl::StartsWith(plan.egress().http_socket(), root_ + "/run/"))
      << plan.egress().http_socket();
  EXPECT_TRUE(absl::StartsWith(plan.egress().socks_socket(), root_ + "/run/"))
      << plan.egress().socks_socket();
  EXPECT_TRUE(plan.has_create_guard());
  std::vector<std::string> forbidden(plan.forbidden_dirs().begin(), plan.forbidden_dirs().end());
  for (const std::string& dir : {root_ + "/launcher", root_ + "/run"}) {
    EXPECT_NE(std::find(forbidden.begin(), forbidden.end(), dir), forbidden.end()) << dir;
  }
}

struct CreateGuardCase {
  std::string name;
  bool available;     // what the launcher's probe says
  bool opt_out;       // the spec sets writeDenyPatterns to an empty list
  StatusCode launch;  // a writable native Launch
  std::string field;  // what its error starts with
};

void PrintTo(const CreateGuardCase& c, std::ostream* os) { *os << c.name; }

class CreateGuardTest : public BrokerServiceTest,
                        public ::testing::WithParamInterface<CreateGuardCase> {};

TEST_P(CreateGuardTest, ProbeAndLaunchAskTheLauncherAboutItsCreateGuard) {
  const CreateGuardCase& c = GetParam();
  v1::LauncherProbeResponse probe;
  probe.set_create_guard_available(c.available);
  probe.set_create_guard_reason(c.available ? "enforced by the fake" : "no seccomp notify here");
  launcher_->Start(probe);
  StartBroker();
  {
    grpc::ClientContext context;
    v1::ProbeResponse response;
    ASSERT_TRUE(stub_->Probe(&context, v1::ProbeRequest(), &response).ok());
    EXPECT_EQ(response.dispatch_backend(), v1::SANDBOX_BACKEND_NATIVE);
    EXPECT_EQ(response.filename_denies_enforced(), c.available);
    EXPECT_TRUE(absl::StrContains(response.filename_denies_note(), probe.create_guard_reason()))
        << response.filename_denies_note();
  }
  v1::LaunchRequest request = LaunchRequest("guard");
  if (c.opt_out) request.mutable_spec()->mutable_write_deny_patterns();
  v1::SandboxHandle handle;
  grpc::Status status = Launch(request, &handle);
  EXPECT_EQ(status.error_code(), c.launch) << status.error_message();
  if (!status.ok()) {
    EXPECT_TRUE(absl::StartsWith(status.error_message(), c.field + ": ")) << status.error_message();
    // The refusal says what the launcher said.
    EXPECT_TRUE(absl::EndsWith(status.error_message(), "[launcher: no seccomp notify here]"))
        << status.error_message();
  }
  EXPECT_EQ(fake().probes(), 1) << "the launcher's answer is kept once it has given one";
  EXPECT_EQ(EgressDirs(), status.ok() ? 1 : 0);
}

INSTANTIATE_TEST_SUITE_P(
    Answers, CreateGuardTest,
    ::testing::Values(CreateGuardCase{"Available", true, false, StatusCode::OK, ""},
                      CreateGuardCase{"Missing", false, false, StatusCode::FAILED_PRECONDITION,
                                      "writeDenyPatterns"},
                      CreateGuardCase{"MissingWithOptOut", false, true,
                                      StatusCode::FAILED_PRECONDITION, "denyWriteNames"}),
    [](const ::testing::TestParamInfo<CreateGuardCase>& info) { return info.param.name; });

struct BadInputCase {
  std::string name;
  std::function<void(v1::LaunchRequest&)> launch;  // null: the Launch is valid
  std::function<void(v1::ExecRequest&)> exec;      // applied to a valid Exec
  std::string field;                               // what the message starts with
};

void PrintTo(const BadInputCase& c, std::ostream* os) { *os << c.name; }

class BadInputTest : public BrokerServiceTest,
                     public ::testing::WithParamInterface<BadInputCase> {};

TEST_P(BadInputTest, IsInvalidArgumentNamingTheField) {
  const BadInputCase& c = GetParam();
  launcher_->Start();
  StartBroker();
  v1::LaunchRequest launch = LaunchRequest("bad");
  grpc::Status status;
  if (c.launch) {
    c.launch(launch);
    v1::SandboxHandle handle;
    status = Launch(launch, &handle);
    EXPECT_TRUE(ListSessions().empty());
    EXPECT_EQ(EgressDirs(), 0);
  } else {
    Launch("bad");
    v1::ExecRequest exec = Request("bad", {"exit"});
    c.exec(exec);
    Stream run = Exec(exec);
    EXPECT_TRUE(run.events.empty());
    status = run.status;
    EXPECT_EQ(StateOf("bad"), v1::SANDBOX_STATE_WARM);
  }
  EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT) << status.error_message();
  // The field, then ": " (or, for an allowlist entry, the entry quoted).
  EXPECT_TRUE(absl::StartsWith(status.error_message(), c.field + ": ") ||
              absl::StartsWith(status.error_message(), c.field + " \""))
      << status.error_message();
  EXPECT_TRUE(fake().plans().empty()) << "a refused request reached the launcher";
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadInputTest,
    ::testing::Values(
        BadInputCase{"Backend", [](v1::LaunchRequest& r) { r.set_backend("vm"); }, nullptr,
                     "backend"},
        BadInputCase{"SessionIdMissing",
                     [](v1::LaunchRequest& r) { r.mutable_spec()->clear_session_id(); }, nullptr,
                     "sessionId"},
        BadInputCase{"SessionIdCharacters",
                     [](v1::LaunchRequest& r) { r.mutable_spec()->set_session_id("a/b"); }, nullptr,
                     "sessionId"},
        BadInputCase{"Mode", [](v1::LaunchRequest& r) { r.mutable_spec()->set_mode("party"); },
                     nullptr, "mode"},
        BadInputCase{"HostPathRelative",
                     [](v1::LaunchRequest& r) {
                       r.mutable_spec()->mutable_bind_mounts(0)->set_host_path("work");
                     },
                     nullptr, "bindMounts[0].hostPath"},
        BadInputCase{"GuestPathDiffersOnNative",
                     [](v1::LaunchRequest& r) {
                       r.mutable_spec()->mutable_bind_mounts(0)->set_guest_path("/elsewhere");
                     },
                     nullptr, "bindMounts[0].guestPath"},
        BadInputCase{"BindOfTheLaunchersSocketDir",
                     [](v1::LaunchRequest& r) {
                       v1::SandboxBindMount* bind = r.mutable_spec()->mutable_bind_mounts(0);
                       std::string path = bind->host_path();
                       path.replace(path.rfind("/work"), 5, "/launcher");
                       bind->set_host_path(path);
                       bind->set_guest_path(path);
                     },
                     nullptr, "bindMounts[0].hostPath"},
        BadInputCase{"EgressAllowlist",
                     [](v1::LaunchRequest& r) {
                       r.mutable_spec()->add_egress_allowlist("no spaces allowed");
                     },
                     nullptr, "egressAllowlist[0]"},
        BadInputCase{"ArgvEmpty", nullptr, [](v1::ExecRequest& r) { r.clear_argv(); }, "argv"},
        BadInputCase{"EnvName", nullptr,
                     [](v1::ExecRequest& r) { (*r.mutable_env())["A=B"] = "c"; }, "env['A=B']"},
        BadInputCase{"GuestWorkdir", nullptr,
                     [](v1::ExecRequest& r) { r.set_guest_workdir("relative"); }, "guestWorkdir"},
        BadInputCase{"Timeout", nullptr,
                     [](v1::ExecRequest& r) { r.set_timeout_ms(uint64_t{8} * 24 * 3600 * 1000); },
                     "timeoutMs"},
        BadInputCase{"Stdin", nullptr,
                     [](v1::ExecRequest& r) { r.set_stdin(std::string((4 << 20) + 1, 'x')); },
                     "stdin"}),
    [](const ::testing::TestParamInfo<BadInputCase>& info) { return info.param.name; });

}  // namespace
}  // namespace ccsandbox::broker
