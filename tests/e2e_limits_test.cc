// Oversized, malformed and non-UTF-8 input end to end: raw gRPC requests to the real broker
// (and through it the launcher) get INVALID_ARGUMENT naming the field, with a message under
// 1 KiB whatever they sent, and the daemons keep serving normal runs afterwards.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "policy/plan/input_limits.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/review_sessions.h"

namespace ccsandbox::testing {
namespace {

constexpr size_t kBoundedMessage = 1024;

// With the broker as root and as an unprivileged user (the production shape).
class LimitsTest : public ReviewSessionsTest, public ::testing::WithParamInterface<bool> {
 protected:
  DaemonOptions Options() override { return {.unprivileged_broker = GetParam()}; }

  v1::SandboxSpec GoodSpec(const std::string& id) {
    v1::SandboxSpec spec;
    spec.set_session_id(id);
    spec.set_mode("review");  // read-only: no create guard needed on any host
    v1::SandboxBindMount* bind = spec.add_bind_mounts();
    bind->set_host_path(work_);
    bind->set_guest_path(work_);
    return spec;
  }

  grpc::Status Launch(const v1::SandboxSpec& spec) {
    v1::LaunchRequest request;
    *request.mutable_spec() = spec;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    v1::SandboxHandle handle;
    return stub_->Launch(&ctx, request, &handle);
  }

  grpc::Status Exec(const v1::ExecRequest& request, std::vector<v1::SandboxEvent>* events) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto reader = stub_->Exec(&ctx, request);
    v1::SandboxEvent event;
    while (reader->Read(&event)) events->push_back(event);
    return reader->Finish();
  }

  // Both daemons are alive and a normal run works end to end.
  void ExpectStillServing(const std::string& id) {
    ASSERT_EQ(kill(d_->launcher_pid(), 0), 0) << "the launcher died";
    ASSERT_TRUE(Launch(GoodSpec(id)).ok()) << "the broker no longer launches";
    v1::ExecRequest request;
    request.set_session_id(id);
    for (const char* arg : {"sh", "-c", "echo still-serving"}) request.add_argv(arg);
    std::vector<v1::SandboxEvent> events;
    grpc::Status status = Exec(request, &events);
    ASSERT_TRUE(status.ok()) << status.error_message();
    std::string out;
    for (const auto& e : events) out += e.stdout();
    EXPECT_EQ(out, "still-serving\n");
    ASSERT_FALSE(events.empty());
    EXPECT_TRUE(events.back().has_exit()) << events.back().DebugString();
  }
};

void ExpectRefusal(const grpc::Status& status, grpc::StatusCode code, const std::string& field,
                   const std::string& name) {
  EXPECT_EQ(status.error_code(), code) << name << ": " << status.error_message().substr(0, 2000);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), field))
      << name << ": " << status.error_message().substr(0, 2000);
  EXPECT_LT(status.error_message().size(), kBoundedMessage) << name;
}

struct LaunchCase {
  const char* name;
  std::function<void(v1::SandboxSpec&)> mutate;
  const char* field;
};

TEST_P(LimitsTest, LaunchRefusesOversizedAndMalformedSpecsNamingTheField) {
  const std::string big_path = "/var/tmp/" + std::string(10 << 20, 'p');  // 10 MB
  const LaunchCase cases[] = {
      {"20,000 bind mounts",
       [&](v1::SandboxSpec& s) {
         for (int i = 0; i < 20000; ++i) *s.add_bind_mounts() = s.bind_mounts(0);
       },
       "bindMounts:"},
      {"a 10 MB path",
       [&](v1::SandboxSpec& s) { s.mutable_bind_mounts(0)->set_host_path(big_path); },
       "bindMounts[0].hostPath"},
      {"a 10 MB workdir", [&](v1::SandboxSpec& s) { s.set_guest_workdir(big_path); },
       "guestWorkdir"},
      {"a 300-byte file name",
       [&](v1::SandboxSpec& s) { s.add_protected_paths(work_ + "/" + std::string(300, 'n')); },
       "protectedPaths[0]"},
      {"a NUL in a path",
       [&](v1::SandboxSpec& s) { s.add_runner_state_dirs(work_ + std::string("\0/etc", 5)); },
       "runnerStateDirs[0]"},
      // Serialised as is by the C++ client (which only logs); the broker cannot parse it.
      {"invalid UTF-8 in a path",
       [&](v1::SandboxSpec& s) { s.mutable_bind_mounts(0)->set_host_path(work_ + "/\xff\xfe"); },
       "SandboxBindMount.hostPath"},
      {"invalid UTF-8 in the session id", [&](v1::SandboxSpec& s) { s.set_session_id("s\xc3"); },
       "SandboxSpec.sessionId"},
      {"a 1 MB mode", [&](v1::SandboxSpec& s) { s.set_mode(std::string(1 << 20, 'm')); }, "mode"},
      {"5,000 egress entries",
       [&](v1::SandboxSpec& s) {
         for (int i = 0; i < 5000; ++i)
           s.add_egress_allowlist(absl::StrCat("h", i, ".example.com"));
       },
       "egressAllowlist:"},
      {"a 1 MB egress entry",
       [&](v1::SandboxSpec& s) { s.add_egress_allowlist(std::string(1 << 20, 'e') + ".com"); },
       "egressAllowlist[0]"},
  };
  for (const LaunchCase& c : cases) {
    v1::SandboxSpec spec = GoodSpec("launch-limits");
    c.mutate(spec);
    ExpectRefusal(Launch(spec), grpc::StatusCode::INVALID_ARGUMENT, c.field, c.name);
  }
  ExpectStillServing("after-launch-limits");
}

struct ExecCase {
  const char* name;
  std::function<void(v1::ExecRequest&)> mutate;
  grpc::StatusCode code;
  const char* field;
};

TEST_P(LimitsTest, ExecRefusesOversizedAndMalformedRequestsNamingTheField) {
  ASSERT_TRUE(Launch(GoodSpec("exec-limits")).ok());
  const ExecCase cases[] = {
      {"argv with 100,000 entries",
       [](v1::ExecRequest& e) {
         for (int i = 0; i < 100000; ++i) e.add_argv("x");
       },
       grpc::StatusCode::INVALID_ARGUMENT, "argv:"},
      // 9,000 entries alone would already exceed bwrap's 9,000 arguments with the mounts.
      {"argv with 9,000 entries",
       [](v1::ExecRequest& e) {
         for (int i = 0; i < 9000; ++i) e.add_argv("x");
       },
       grpc::StatusCode::INVALID_ARGUMENT, "argv:"},
      {"a 1 MB argument", [](v1::ExecRequest& e) { e.add_argv(std::string(1 << 20, 'a')); },
       grpc::StatusCode::INVALID_ARGUMENT, "argv[3]"},
      {"3 MB of arguments",
       [](v1::ExecRequest& e) {
         for (int i = 0; i < 30; ++i) e.add_argv(std::string(100000, 'a'));
       },
       grpc::StatusCode::INVALID_ARGUMENT, "argv:"},
      {"a NUL in argv", [](v1::ExecRequest& e) { e.add_argv(std::string("a\0b", 3)); },
       grpc::StatusCode::INVALID_ARGUMENT, "argv[3]"},
      {"invalid UTF-8 in argv", [](v1::ExecRequest& e) { e.add_argv("\xff"); },
       grpc::StatusCode::INVALID_ARGUMENT, "ExecRequest.argv"},
      {"a NUL in an env value",
       [](v1::ExecRequest& e) { (*e.mutable_env())["A"] = std::string("a\0b", 3); },
       grpc::StatusCode::INVALID_ARGUMENT, "env['A']"},
      {"'=' in an env name", [](v1::ExecRequest& e) { (*e.mutable_env())["A=B"] = "x"; },
       grpc::StatusCode::INVALID_ARGUMENT, "env['A=B']"},
      {"10,000 env entries",
       [](v1::ExecRequest& e) {
         for (int i = 0; i < 10000; ++i) (*e.mutable_env())[absl::StrCat("V", i)] = "v";
       },
       grpc::StatusCode::INVALID_ARGUMENT, "env:"},
      {"a 10 MB workdir",
       [](v1::ExecRequest& e) { e.set_guest_workdir("/" + std::string(10 << 20, 'w')); },
       grpc::StatusCode::INVALID_ARGUMENT, "guestWorkdir"},
      {"a 5 MiB stdin", [](v1::ExecRequest& e) { e.set_stdin(std::string(5 << 20, 's')); },
       grpc::StatusCode::INVALID_ARGUMENT, "stdin"},
      // Past the message size every server sets: gRPC's own refusal, before any handler.
      {"a 20 MiB stdin", [](v1::ExecRequest& e) { e.set_stdin(std::string(20 << 20, 's')); },
       grpc::StatusCode::RESOURCE_EXHAUSTED, "Received message larger than max"},
      {"a timeout that overflows", [](v1::ExecRequest& e) { e.set_timeout_ms(~uint64_t{0}); },
       grpc::StatusCode::INVALID_ARGUMENT, "timeoutMs"},
      {"a 10 MB session id",
       [](v1::ExecRequest& e) { e.set_session_id(std::string(10 << 20, 'i')); },
       grpc::StatusCode::INVALID_ARGUMENT, "sessionId"},
  };
  for (const ExecCase& c : cases) {
    v1::ExecRequest request;
    request.set_session_id("exec-limits");
    for (const char* arg : {"sh", "-c", "echo ran"}) request.add_argv(arg);
    c.mutate(request);
    std::vector<v1::SandboxEvent> events;
    ExpectRefusal(Exec(request, &events), c.code, c.field, c.name);
    EXPECT_TRUE(events.empty()) << c.name << ": refused requests start nothing";
  }
  // The limit itself is accepted: exactly kMaxStdinBytes reach the command.
  v1::ExecRequest full;
  full.set_session_id("exec-limits");
  for (const char* arg : {"wc", "-c"}) full.add_argv(arg);
  full.set_stdin(std::string(policy::kMaxStdinBytes, 's'));
  std::vector<v1::SandboxEvent> events;
  grpc::Status status = Exec(full, &events);
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::string out;
  for (const auto& e : events) out += e.stdout();
  EXPECT_EQ(out, absl::StrCat(policy::kMaxStdinBytes, "\n"));
  ExpectStillServing("after-exec-limits");
}

TEST_P(LimitsTest, EveryStatusMessageIsBoundedWhateverItQuotes) {
  grpc::ClientContext ctx;
  v1::SessionRequest request;
  request.set_session_id(std::string(5 << 20, 'g'));
  v1::SandboxHandle handle;
  grpc::Status status = stub_->GetSession(&ctx, request, &handle);
  ExpectRefusal(status, grpc::StatusCode::NOT_FOUND, "sessionId", "huge unknown session");
  ExpectStillServing("after-bounded");
}

TEST_P(LimitsTest, AHostFileNameThatIsNotUtf8IsRefusedAtLaunchNotLost) {
  // A secret the sandbox must not read, under a directory no proto3 string can name.
  const std::string dir = work_ + "/\xff";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::ofstream(dir + "/.netrc") << "machine example.com password secret";
  grpc::Status status = Launch(GoodSpec("bad-name"));
  ExpectRefusal(status, grpc::StatusCode::FAILED_PRECONDITION, "denyReadPaths[", "bad name");
  EXPECT_TRUE(absl::StrContains(status.error_message(), "\\xff/.netrc")) << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "rename it")) << status.error_message();
  unlink((dir + "/.netrc").c_str());
  rmdir(dir.c_str());
  ExpectStillServing("after-bad-name");
}

TEST_P(LimitsTest, SandboxctlRefusesBeforeLaunchingAndSaysWhy) {
  const std::string sandboxctl = Runfile("broker/sandboxctl");
  const std::string broker = "--broker=" + d_->broker_address();
  ProgramResult big = RunProgram({sandboxctl, broker, "run", "--stdin", "--", "wc", "-c"},
                                 std::nullopt, std::string(5 << 20, 's'), work_);
  EXPECT_EQ(big.exit_code, 125) << big.out << big.err;
  EXPECT_TRUE(absl::StrContains(big.err, "stdin: more than 4194304 bytes")) << big.err;
  ProgramResult utf8 =
      RunProgram({sandboxctl, broker, "run", "--", "echo", "ok", "\xff"}, std::nullopt, "", work_);
  EXPECT_EQ(utf8.exit_code, 125) << utf8.out << utf8.err;
  EXPECT_TRUE(absl::StrContains(utf8.err, "argv[2]: is not valid UTF-8")) << utf8.err;
  ProgramResult timeout = RunProgram({sandboxctl, broker, "run", "--timeout=1e300", "--", "true"},
                                     std::nullopt, "", work_);
  EXPECT_EQ(timeout.exit_code, 125) << timeout.err;
  EXPECT_TRUE(absl::StrContains(timeout.err, "--timeout")) << timeout.err;
  // Nothing was launched for any of them.
  grpc::ClientContext ctx;
  v1::ListSessionsResponse list;
  ASSERT_TRUE(stub_->ListSessions(&ctx, v1::ListSessionsRequest(), &list).ok());
  EXPECT_EQ(list.sessions_size(), 0);
  ExpectStillServing("after-sandboxctl");
}

// A writable tree with ~3,000 existing .env files: each is a read-only deny bind (with its
// directory pinned), more than bwrap's 9,000 arguments. Launch says so, naming what overflowed,
// in a bounded message, before any sandbox starts.
TEST_P(LimitsTest, DenyBindsBeyondBwrapsArgumentLimitAreRefusedAtLaunch) {
  for (int i = 0; i < 3000; ++i) {
    const std::string dir = absl::StrCat(work_, "/d", i);
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0) << dir;
    std::ofstream(dir + "/.env") << "S=" << i << "\n";
  }
  d_->GiveToCaller(work_);
  v1::SandboxSpec spec = GoodSpec("many-denies");
  spec.set_mode("chat");
  grpc::Status status = Launch(spec);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "deny paths")) << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "bwrap accepts at most 9000"))
      << status.error_message();
  EXPECT_LT(status.error_message().size(), 2048u);
  grpc::ClientContext ctx;
  v1::ListSessionsResponse list;
  ASSERT_TRUE(stub_->ListSessions(&ctx, v1::ListSessionsRequest(), &list).ok());
  EXPECT_EQ(list.sessions_size(), 0);
  ExpectStillServing("after-many-denies");  // read-only: no deny binds for the .env files
}

// A new name that is not UTF-8: its violation's target arrives with U+FFFD for the bad byte
// (proto3 strings must be UTF-8), and the run ends normally.
TEST_P(LimitsTest, ANonUtf8NameInAViolationArrivesSanitized) {
  v1::SandboxSpec spec = GoodSpec("unparseable-event");
  spec.set_mode("chat");
  grpc::Status launched = Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.error_message();
  v1::ExecRequest request;
  request.set_session_id("unparseable-event");
  for (const char* arg : {"sh", "-c", "touch \"$(printf '\\377').pem\"; echo done"}) {
    request.add_argv(arg);
  }
  request.set_guest_workdir(work_);
  std::vector<v1::SandboxEvent> events;
  const auto start = std::chrono::steady_clock::now();
  grpc::Status status = Exec(request, &events);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_TRUE(status.ok()) << status.error_message();
  bool sanitized = false;
  for (const v1::SandboxEvent& e : events) {
    if (e.has_violation() && absl::EndsWith(e.violation().target(), "/\xEF\xBF\xBD.pem")) {
      sanitized = true;
    }
  }
  EXPECT_TRUE(sanitized) << "no violation with the sanitized name";
  ExpectStillServing("after-unparseable-event");
}

INSTANTIATE_TEST_SUITE_P(Brokers, LimitsTest, ::testing::Bool(), BrokerIdentityName);

}  // namespace
}  // namespace ccsandbox::testing
