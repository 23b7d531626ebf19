// The broker's gRPC API end to end: event order and labels, cancellation, Kill, sessions,
// the launcher's peer check, an independent Python client, and health and reflection on both
// daemons (a generic reflection client with none of our .proto files).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/unique_fd.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {
namespace {

class BrokerApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto daemons = Daemons::Start();
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    daemons_ = std::move(*daemons);
    stub_ = v1::SandboxBroker::NewStub(
        grpc::CreateChannel(daemons_->broker_address(), grpc::InsecureChannelCredentials()));
    work_ = daemons_->MakeWorkdir();
  }

  v1::SandboxHandle Launch(const std::string& id) {
    v1::LaunchRequest request;
    request.mutable_spec()->set_session_id(id);
    // Writable native sessions need filename enforcement or this explicit opt-out.
    request.mutable_spec()->mutable_write_deny_patterns();
    v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
    bind->set_host_path(work_);
    bind->set_guest_path(work_);
    grpc::ClientContext ctx;
    v1::SandboxHandle handle;
    grpc::Status status = stub_->Launch(&ctx, request, &handle);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return handle;
  }

  std::vector<v1::SandboxEvent> Exec(const v1::ExecRequest& request, grpc::Status* status) {
    grpc::ClientContext ctx;
    auto reader = stub_->Exec(&ctx, request);
    std::vector<v1::SandboxEvent> events;
    v1::SandboxEvent event;
    while (reader->Read(&event)) events.push_back(event);
    *status = reader->Finish();
    return events;
  }

  std::unique_ptr<Daemons> daemons_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
  std::string work_;
};

v1::ExecRequest Request(const std::string& session, std::vector<std::string> argv) {
  v1::ExecRequest request;
  request.set_session_id(session);
  for (auto& a : argv) request.add_argv(a);
  return request;
}

// A command that prints "started" once it runs, then runs `script`.
std::vector<std::string> Started(const std::string& script) {
  return {"sh", "-c", "echo started; " + script};
}

// Reads `reader` up to the command's first output (see Started): from then on the command
// itself runs. (`ready` comes earlier, as soon as bwrap is spawned, while bwrap is still
// setting the sandbox up.)
::testing::AssertionResult ReadUntilTheCommandRuns(grpc::ClientReader<v1::SandboxEvent>& reader) {
  v1::SandboxEvent event;
  while (reader.Read(&event)) {
    if (event.has_stdout()) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "the stream ended before the command printed: " << reader.Finish().error_message();
}

// Reads the rest of `reader`'s stream.
std::vector<v1::SandboxEvent> ReadToEnd(grpc::ClientReader<v1::SandboxEvent>& reader,
                                        grpc::Status* status) {
  std::vector<v1::SandboxEvent> events;
  v1::SandboxEvent event;
  while (reader.Read(&event)) events.push_back(event);
  *status = reader.Finish();
  return events;
}

TEST_F(BrokerApiTest, EventsArriveInOrderAndCarryTheActualBackend) {
  v1::SandboxHandle handle = Launch("order");
  EXPECT_EQ(handle.backend(), v1::SANDBOX_BACKEND_NATIVE);
  EXPECT_EQ(handle.requested_backend(), v1::SANDBOX_BACKEND_UNSPECIFIED);
  EXPECT_EQ(handle.state(), v1::SANDBOX_STATE_WARM);
  grpc::Status status;
  auto events = Exec(Request("order", {"sh", "-c", "echo a; echo b >&2; exit 2"}), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_GE(events.size(), 5u);
  EXPECT_TRUE(events[0].has_starting());
  EXPECT_TRUE(events[1].has_ready());
  EXPECT_GT(events[1].ready().pid(), 0);
  EXPECT_TRUE(events.back().has_exit());
  EXPECT_EQ(events.back().exit().exit_code(), 2);
  std::string out, err;
  for (size_t i = 2; i + 1 < events.size(); ++i) {
    EXPECT_TRUE(events[i].has_stdout() || events[i].has_stderr()) << events[i].DebugString();
    out += events[i].stdout();
    err += events[i].stderr();
  }
  EXPECT_EQ(out, "a\n");
  EXPECT_EQ(err, "b\n");
  for (const auto& e : events) {
    EXPECT_EQ(e.backend(), v1::SANDBOX_BACKEND_NATIVE);
    EXPECT_EQ(e.session_id(), "order");
  }
}

TEST_F(BrokerApiTest, StdinEnvAndWorkdirOverrideReachTheCommand) {
  Launch("io");
  mkdir((work_ + "/sub").c_str(), 0755);
  v1::ExecRequest request = Request("io", {"sh", "-c", "cat; echo \" $MY_VAR $PWD\""});
  request.set_stdin("in");
  (*request.mutable_env())["MY_VAR"] = "v";
  (*request.mutable_env())["LD_PRELOAD"] = "/evil.so";
  request.set_guest_workdir(work_ + "/sub");
  grpc::Status status;
  auto events = Exec(request, &status);
  std::string out;
  for (const auto& e : events) out += e.stdout();
  EXPECT_EQ(out, "in v " + work_ + "/sub\n");
}

TEST_F(BrokerApiTest, SessionStatesAndUnknownSessions) {
  Launch("states");
  // The command runs until the test writes a line into this fifo, so the session is ACTIVE
  // for as long as the test looks. Held open read-write here, a line written stays in the fifo
  // until the command reads it.
  const std::string fifo = work_ + "/go";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0666), 0);
  ASSERT_EQ(chmod(fifo.c_str(), 0666), 0);
  UniqueFd go(open(fifo.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(go.valid());
  {
    grpc::ClientContext exec_ctx;
    exec_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto reader = stub_->Exec(&exec_ctx, Request("states", Started("read line < " + fifo)));
    ASSERT_TRUE(ReadUntilTheCommandRuns(*reader));
    grpc::ClientContext ctx;
    v1::SessionRequest req;
    req.set_session_id("states");
    v1::SandboxHandle handle;
    ASSERT_TRUE(stub_->GetSession(&ctx, req, &handle).ok());
    EXPECT_EQ(handle.state(), v1::SANDBOX_STATE_ACTIVE);
    ASSERT_EQ(write(go.get(), "go\n", 3), 3);
    grpc::Status status;
    std::vector<v1::SandboxEvent> rest = ReadToEnd(*reader, &status);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_FALSE(rest.empty());
    EXPECT_EQ(rest.back().exit().exit_code(), 0) << rest.back().DebugString();
  }
  grpc::ClientContext get_ctx, list_ctx, destroy_ctx, again_ctx;
  v1::SessionRequest req;
  req.set_session_id("states");
  v1::SandboxHandle handle;
  ASSERT_TRUE(stub_->GetSession(&get_ctx, req, &handle).ok());
  EXPECT_EQ(handle.state(), v1::SANDBOX_STATE_WARM);
  v1::ListSessionsResponse list;
  ASSERT_TRUE(stub_->ListSessions(&list_ctx, v1::ListSessionsRequest(), &list).ok());
  EXPECT_EQ(list.sessions_size(), 1);
  ASSERT_TRUE(stub_->Destroy(&destroy_ctx, req, &handle).ok());
  EXPECT_EQ(handle.state(), v1::SANDBOX_STATE_DESTROYED);
  EXPECT_EQ(stub_->GetSession(&again_ctx, req, &handle).error_code(), grpc::StatusCode::NOT_FOUND);
  grpc::Status status;
  Exec(Request("states", {"true"}), &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "sessionId")) << status.error_message();
}

TEST_F(BrokerApiTest, CancellingTheClientKillsTheSandbox) {
  Launch("cancel");
  const std::string marker = "4321.1234";
  grpc::ClientContext ctx;
  auto reader = stub_->Exec(&ctx, Request("cancel", Started("exec sleep " + marker)));
  ASSERT_TRUE(ReadUntilTheCommandRuns(*reader));
  // The shell may still be in execve (an empty /proc cmdline) right after its echo.
  ASSERT_TRUE(WaitForProcessMatching(marker, 3));
  ctx.TryCancel();
  reader->Finish();
  EXPECT_TRUE(WaitNoProcessMatches(marker, 3)) << "the sandbox outlived its cancelled client";
}

TEST_F(BrokerApiTest, KillEndsTheRunWithAKilledEvent) {
  Launch("kill");
  grpc::ClientContext exec_ctx;
  exec_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto reader = stub_->Exec(&exec_ctx, Request("kill", Started("exec sleep 300")));
  ASSERT_TRUE(ReadUntilTheCommandRuns(*reader));
  grpc::ClientContext ctx;
  v1::KillRequest req;
  req.set_session_id("kill");
  req.set_reason("operator stop");
  v1::KillResponse resp;
  ASSERT_TRUE(stub_->Kill(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.runs_signalled(), 1);
  grpc::Status status;
  std::vector<v1::SandboxEvent> events = ReadToEnd(*reader, &status);
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(events.back().has_killed()) << events.back().DebugString();
  EXPECT_EQ(events.back().killed().reason(), "stopped");
  EXPECT_EQ(events.back().killed().detail(), "killed: operator stop");
}

// Kill as early as a client can: at `ready`, while bwrap is still building the sandbox. The
// sandbox's pid 1 must stay in the run's process group, or a kill that lands before it has armed
// --die-with-parent leaves it (and the command it then starts) running outside the launcher's
// control. With bwrap's --new-session that happened in about 1 run in 300.
TEST_F(BrokerApiTest, AKillAtReadyLeavesNothingRunning) {
  Launch("early");
  const std::string marker = "7777.2222";
  constexpr int kRuns = 60;
  for (int i = 0; i < kRuns; ++i) {
    grpc::ClientContext exec_ctx;
    exec_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto reader = stub_->Exec(&exec_ctx, Request("early", {"sleep", marker}));
    v1::SandboxEvent event;
    bool ready = false;
    while (!ready && reader->Read(&event)) ready = event.has_ready();
    ASSERT_TRUE(ready) << "run " << i << ": no ready event";
    grpc::ClientContext ctx;
    v1::KillRequest req;
    req.set_session_id("early");
    v1::KillResponse resp;
    ASSERT_TRUE(stub_->Kill(&ctx, req, &resp).ok());
    grpc::Status status;
    std::vector<v1::SandboxEvent> events = ReadToEnd(*reader, &status);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_FALSE(events.empty());
    EXPECT_TRUE(events.back().has_killed()) << events.back().DebugString();
  }
  EXPECT_TRUE(WaitNoProcessMatches("sleep " + marker, 3)) << "a killed sandbox kept running";
}

TEST_F(BrokerApiTest, TheLauncherRefusesAPeerWithAnotherUid) {
  // Even with the socket's mode opened up by mistake, SO_PEERCRED decides.
  ASSERT_EQ(chmod(daemons_->dir().c_str(), 0755), 0);
  ASSERT_EQ(chmod(daemons_->launcher_socket().c_str(), 0666), 0);
  const std::string script =
      "import grpc, sys\n"
      "ch = grpc.insecure_channel('unix:" +
      daemons_->launcher_socket() +
      "')\n"
      "probe = ch.unary_unary('/ccsandbox.v1.SandboxLauncher/Probe')\n"
      "try:\n"
      "    probe(b'', timeout=10)\n"
      "    print('ALLOWED')\n"
      "except grpc.RpcError as e:\n"
      "    print(e.code().name, e.details())\n";
  ProgramResult r =
      RunProgram({"/usr/bin/python3", "-c", script}, launcher::Identity{65534, 65534, {}}, "", "/");
  EXPECT_TRUE(absl::StartsWith(r.out, "PERMISSION_DENIED")) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(daemons_->LauncherLog(), "refused connection from uid 65534"))
      << daemons_->LauncherLog();
  // The allowed uid still works.
  Launch("still-ok");
  grpc::Status status;
  auto events = Exec(Request("still-ok", {"true"}), &status);
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events.back().has_exit());
}

TEST_F(BrokerApiTest, APythonGrpcClientCallsProbeAndExec) {
  ProgramResult r = RunProgram({"/usr/bin/python3", Runfile("tests/python/client.py"), Runfile(""),
                                daemons_->broker_address(), work_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& out = r.out;
  EXPECT_TRUE(absl::StrContains(out, "\"statusLine\": \"agent sandbox ON (bubblewrap")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"backend\": \"SANDBOX_BACKEND_NATIVE\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"state\": \"SANDBOX_STATE_WARM\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"kinds\": [\"starting\", \"ready\", \"stdout\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"stdout\": \"stdin-bytes from-python\\n\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"exitCode\": 5")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"destroyedState\": \"SANDBOX_STATE_DESTROYED\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"afterDestroy\": \"NOT_FOUND\"")) << out;
}

}  // namespace
}  // namespace ccsandbox::testing

namespace ccsandbox::testing {
namespace {

int OpenFds(pid_t pid) {
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr) return -1;
  int count = 0;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count;
}

TEST_F(BrokerApiTest, ABrokerCrashKillsItsSandboxes) {
  Launch("crash");
  const std::string marker = "5555.4444";
  grpc::ClientContext ctx;
  auto reader = stub_->Exec(&ctx, Request("crash", Started("exec sleep " + marker)));
  ASSERT_TRUE(ReadUntilTheCommandRuns(*reader));
  // The shell may still be in execve (an empty /proc cmdline) right after its echo.
  ASSERT_TRUE(WaitForProcessMatching(marker, 3));
  daemons_->CrashBroker();
  EXPECT_TRUE(WaitNoProcessMatches(marker, 3)) << "a sandbox outlived the broker";
  ctx.TryCancel();
}

TEST_F(BrokerApiTest, ALauncherRestartEndsRunsAsKilledAndLaunchesWorkAgain) {
  Launch("restart");
  grpc::ClientContext exec_ctx;
  exec_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto reader = stub_->Exec(&exec_ctx, Request("restart", Started("exec sleep 6666.1111")));
  ASSERT_TRUE(ReadUntilTheCommandRuns(*reader));
  ASSERT_TRUE(daemons_->RestartLauncher().ok());
  grpc::Status run_status;
  std::vector<v1::SandboxEvent> events = ReadToEnd(*reader, &run_status);
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(events.back().has_killed()) << events.back().DebugString();
  EXPECT_EQ(events.back().killed().reason(), "launcher-restart") << events.back().killed().detail();
  EXPECT_TRUE(WaitNoProcessMatches("6666.1111", 3));
  // The session's sandbox ended with the launcher: never relaunched silently.
  grpc::Status status;
  Exec(Request("restart", {"echo", "back"}), &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  Launch("restarted");
  auto again = Exec(Request("restarted", {"echo", "back"}), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_FALSE(again.empty());
  EXPECT_EQ(again.back().exit().exit_code(), 0);
}

TEST_F(BrokerApiTest, TheLauncherLeaksNoDescriptorsAcrossRuns) {
  Launch("fds");
  grpc::Status status;
  Exec(Request("fds", {"true"}), &status);  // warm up gRPC's own descriptors
  const int before = OpenFds(daemons_->launcher_pid());
  for (int i = 0; i < 20; ++i) {
    Exec(Request("fds", {"sh", "-c", "echo x; echo y >&2"}), &status);
    ASSERT_TRUE(status.ok());
  }
  EXPECT_EQ(OpenFds(daemons_->launcher_pid()), before);
}

TEST_F(BrokerApiTest, HealthAndReflectionAreServed) {
  ProgramResult r = RunProgram({"/usr/bin/python3", Runfile("tests/python/health_reflection.py"),
                                daemons_->broker_address()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "health 0801")) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "reflection True")) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "reflection_v1 True")) << r.out << r.err;
}

// What tests/python/reflection_client.py printed for `key` (its "KEY JSON" lines), or "".
std::string Said(const std::string& out, const std::string& key) {
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::ConsumePrefix(&line, key + " ")) return std::string(line);
  }
  return "";
}

// A client with none of our .proto files learns the API through reflection v1 and drives it.
TEST_F(BrokerApiTest, AGenericReflectionClientDrivesTheBroker) {
  ProgramResult r = RunProgram({"/usr/bin/python3", Runfile("tests/python/reflection_client.py"),
                                "broker", daemons_->broker_address(), work_});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string services =
      R"(["ccsandbox.v1.SandboxBroker", "ccsandbox.v1.SandboxPolicy", )"
      R"("ccsandbox.v1.SandboxWorkspace", "grpc.health.v1.Health", )"
      R"("grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"])";
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"v1.services", services},
      {"v1alpha.services", services},
      {"resolved.ccsandbox.v1.SandboxBroker",
       R"(["proto/sandbox.proto", "google/protobuf/struct.proto"])"},
      {"resolved.grpc.health.v1.Health", R"(["proto/health.proto"])"},
      {"by_filename", "true"},
      {"unknown_symbol", R"("5 symbol 'no.such.Symbol' not found")"},
      {"launch.backend", R"("SANDBOX_BACKEND_NATIVE")"},
      {"exec.kinds", R"(["starting", "ready", "stdout", "exit"])"},
      {"exec.stdout", R"("from-reflection\n")"},
      {"exec.exitCode", "[7]"},
      {"destroy.state", R"("SANDBOX_STATE_DESTROYED")"},
      {"health[]", R"({"status": "SERVING"})"},
      {"health[ccsandbox.v1.SandboxBroker]", R"({"status": "SERVING"})"},
  };
  for (const auto& [key, value] : expected) {
    EXPECT_EQ(Said(r.out, key), value) << key << "\n" << r.out << r.err;
  }
  EXPECT_TRUE(absl::StartsWith(Said(r.out, "probe.statusLine"), R"("agent sandbox ON)")) << r.out;
}

// The launcher serves health and both reflections too, to its allowed uids only: the peer
// check comes first.
TEST_F(BrokerApiTest, TheLauncherServesHealthAndReflectionToItsAllowedUidsOnly) {
  const std::string address = "unix:" + daemons_->launcher_socket();
  ProgramResult r = RunProgram(
      {"/usr/bin/python3", Runfile("tests/python/reflection_client.py"), "launcher", address});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string services =
      R"(["ccsandbox.v1.SandboxLauncher", "grpc.health.v1.Health", )"
      R"("grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"])";
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"v1.services", services},
      {"v1alpha.services", services},
      {"resolved.grpc.health.v1.Health", R"(["proto/health.proto"])"},
      {"by_filename", "true"},
      {"health[]", R"({"status": "SERVING"})"},
      {"health[ccsandbox.v1.SandboxLauncher]", R"({"status": "SERVING"})"},
  };
  for (const auto& [key, value] : expected) {
    EXPECT_EQ(Said(r.out, key), value) << key << "\n" << r.out << r.err;
  }
  EXPECT_TRUE(absl::StrContains(Said(r.out, "probe.fields"), R"("bwrapPath")")) << r.out;

  // Another uid, even with the socket's mode opened up by mistake: refused, health and
  // reflection included. (The script is passed inline: the runfiles are not its to read.)
  ASSERT_EQ(chmod(daemons_->dir().c_str(), 0755), 0);
  ASSERT_EQ(chmod(daemons_->launcher_socket().c_str(), 0666), 0);
  const std::string script = ReadFile(Runfile("tests/python/reflection_client.py"));
  ASSERT_FALSE(script.empty());
  ProgramResult refused = RunProgram({"/usr/bin/python3", "-c", script, "refused", address},
                                     launcher::Identity{65534, 65534, {}}, "", "/");
  ASSERT_EQ(refused.exit_code, 0) << refused.out << refused.err;
  for (const char* key : {"refused.health", "refused.v1", "refused.v1alpha"}) {
    EXPECT_EQ(Said(refused.out, key), R"("PERMISSION_DENIED")") << key << "\n" << refused.out;
  }
}

}  // namespace
}  // namespace ccsandbox::testing
