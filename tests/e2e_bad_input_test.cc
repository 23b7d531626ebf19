// Bad input at the broker's API and sandboxctl, beyond the size limits of e2e_limits_test:
// unknown sessions at every call, empty argv, double Destroy, Launch racing Destroy, Execs racing
// a Kill, a Kill with a huge reason, undecodable request bytes at every method of both daemons,
// and malformed, deeply nested, huge or endless spec files. Each gets a proper gRPC status (or
// sandboxctl's 125) with a message under 1 KiB; the daemons keep serving; nothing leaks.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"
#include "tests/leak_census.h"
#include "tests/poll_until.h"
#include "tests/review_sessions.h"

namespace ccsandbox::testing {
namespace {

constexpr size_t kBoundedMessage = 1024;

class BadInputTest : public ReviewSessionsTest {
 protected:
  void SetUp() override {
    ReviewSessionsTest::SetUp();
    if (HasFatalFailure()) return;
    // One run first, so that what the daemons make once is in the census.
    ASSERT_TRUE(Launch("warm-up").ok());
    ExpectRuns("warm-up");
    ASSERT_TRUE(Destroy("warm-up").ok());
    before_ = LeakCensus::Take(*d_, {work_});
  }

  void TearDown() override {
    if (d_ == nullptr || HasFatalFailure()) return;
    // Whatever the test sent, the daemons still serve, and hold what they held before.
    ASSERT_TRUE(Launch("still-serving").ok()) << "the broker no longer launches";
    ExpectRuns("still-serving");
    ASSERT_TRUE(Destroy("still-serving").ok());
    EXPECT_TRUE(LeakCensus::SettlesTo(before_, *d_, {work_}, absl::Seconds(30)));
  }

  grpc::Status Kill(const std::string& id, const std::string& reason = "",
                    v1::KillResponse* response = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
    v1::KillRequest request;
    request.set_session_id(id);
    request.set_reason(reason);
    v1::KillResponse ignored;
    return stub_->Kill(&ctx, request, response != nullptr ? response : &ignored);
  }

  void ExpectRuns(const std::string& id) {
    grpc::Status status;
    std::vector<v1::SandboxEvent> events =
        ExecEvents(*stub_, ShExec(id, "echo ok"), &status, absl::Seconds(60));
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(StdoutOf(events), "ok\n");
    EXPECT_EQ(ExitOf(events), 0);
  }

  LeakCensus before_;
};

::testing::AssertionResult Bounded(const grpc::Status& status, const std::string& what) {
  if (status.error_message().size() < kBoundedMessage) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << ": a " << status.error_message().size()
         << "-byte message: " << status.error_message().substr(0, 300);
}

void ExpectStatus(const grpc::Status& status, grpc::StatusCode code, const std::string& what) {
  EXPECT_EQ(status.error_code(), code) << what << ": " << status.error_message().substr(0, 300);
  EXPECT_TRUE(Bounded(status, what));
}

TEST_F(BadInputTest, UnknownSessionsAreNotFoundAtEveryCall) {
  for (const std::string& id : {std::string("nope"), std::string(100, 'n')}) {
    v1::SessionRequest request;
    request.set_session_id(id);
    v1::SandboxHandle handle;
    const std::string name = absl::StrCat(id.size(), "-byte unknown id");
    grpc::ClientContext get, destroy, suspend, resume;
    ExpectStatus(stub_->GetSession(&get, request, &handle), grpc::StatusCode::NOT_FOUND,
                 "GetSession " + name);
    ExpectStatus(stub_->Destroy(&destroy, request, &handle), grpc::StatusCode::NOT_FOUND,
                 "Destroy " + name);
    ExpectStatus(stub_->Suspend(&suspend, request, &handle), grpc::StatusCode::NOT_FOUND,
                 "Suspend " + name);
    ExpectStatus(stub_->Resume(&resume, request, &handle), grpc::StatusCode::NOT_FOUND,
                 "Resume " + name);
    ExpectStatus(Kill(id), grpc::StatusCode::NOT_FOUND, "Kill " + name);
    grpc::Status status;
    std::vector<v1::SandboxEvent> events = ExecEvents(*stub_, ShExec(id, "echo ran"), &status);
    ExpectStatus(status, grpc::StatusCode::NOT_FOUND, "Exec " + name);
    EXPECT_TRUE(events.empty());
  }
  // Past the id limit: no such session, or refused as such at Launch, quoted bounded.
  const std::string huge(1 << 20, 'h');
  ExpectStatus(Kill(huge), grpc::StatusCode::NOT_FOUND, "Kill with a 1 MiB id");
  ExpectStatus(Destroy(huge), grpc::StatusCode::NOT_FOUND, "Destroy with a 1 MiB id");
  ExpectStatus(Launch(huge), grpc::StatusCode::INVALID_ARGUMENT, "Launch with a 1 MiB id");
}

TEST_F(BadInputTest, EmptyArgvDoubleDestroyAndDuplicateLaunch) {
  ASSERT_TRUE(Launch("s").ok());
  // The identical request again is a retry (the live session's handle); another is refused.
  ExpectStatus(Launch("s"), grpc::StatusCode::OK, "the identical Launch again");
  ExpectStatus(Launch("s", "plan"), grpc::StatusCode::ALREADY_EXISTS,
               "a second Launch of one id with another spec");
  v1::ExecRequest empty;
  empty.set_session_id("s");
  grpc::Status status;
  EXPECT_TRUE(ExecEvents(*stub_, empty, &status).empty());
  ExpectStatus(status, grpc::StatusCode::INVALID_ARGUMENT, "Exec with no argv");
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "argv")) << status.error_message();
  v1::ExecRequest empty_program = ShExec("s", "");
  empty_program.clear_argv();
  empty_program.add_argv("");
  ExecEvents(*stub_, empty_program, &status);
  ExpectStatus(status, grpc::StatusCode::INVALID_ARGUMENT, "Exec of an empty program name");
  ASSERT_TRUE(Destroy("s").ok());
  ExpectStatus(Destroy("s"), grpc::StatusCode::NOT_FOUND, "the second Destroy");
}

// Three clients at one session id at once: one launches it, one destroys it, one runs in it.
// Each call gets OK or the status of the state it met; nothing hangs and nothing is left.
TEST_F(BadInputTest, LaunchRacingDestroyAndExec) {
  constexpr int kRounds = 40;
  absl::Mutex mu;
  std::map<std::string, int> seen;
  std::string unexpected;
  auto record = [&](const char* call, const grpc::Status& status,
                    std::initializer_list<grpc::StatusCode> allowed) {
    absl::MutexLock lock(&mu);
    ++seen[absl::StrCat(call, " ", status.error_code())];
    bool ok = false;
    for (grpc::StatusCode code : allowed) ok |= status.error_code() == code;
    if (!ok || status.error_message().size() >= kBoundedMessage) {
      absl::StrAppend(&unexpected, call, ": ", status.error_code(), " ",
                      status.error_message().substr(0, 300), "\n");
    }
  };
  using grpc::StatusCode;
  std::thread launcher([&] {
    for (int i = 0; i < kRounds; ++i) {
      // ABORTED: destroyed while its sandbox started.
      record("Launch", Launch("race"),
             {StatusCode::OK, StatusCode::ALREADY_EXISTS, StatusCode::ABORTED});
    }
  });
  std::thread destroyer([&] {
    for (int i = 0; i < kRounds; ++i) {
      record("Destroy", Destroy("race"), {StatusCode::OK, StatusCode::NOT_FOUND});
    }
  });
  std::thread runner([&] {
    for (int i = 0; i < kRounds; ++i) {
      grpc::Status status;
      std::vector<v1::SandboxEvent> events =
          ExecEvents(*stub_, ShExec("race", "echo ran"), &status, absl::Seconds(60));
      // A run whose session is destroyed under it ends killed; one that never started, refused.
      const bool ended = ExitOf(events) == 0 || (Last(events) && Last(events)->has_killed());
      record(ended ? "Exec ran" : "Exec", status,
             ended ? std::initializer_list<StatusCode>{StatusCode::OK}
                   : std::initializer_list<StatusCode>{StatusCode::NOT_FOUND,
                                                       StatusCode::FAILED_PRECONDITION});
    }
  });
  launcher.join();
  destroyer.join();
  runner.join();
  (void)Destroy("race");
  std::vector<std::string> counts;
  for (const auto& [what, n] : seen) counts.push_back(absl::StrCat(what, " x", n));
  std::cerr << "Launch racing Destroy and Exec: " << absl::StrJoin(counts, ", ") << "\n";
  EXPECT_EQ(unexpected, "");
}

TEST_F(BadInputTest, ExecsRacingAKillAllEndAndLeaveNothingRunning) {
  ASSERT_TRUE(Launch("k").ok());
  constexpr int kExecs = 16;
  std::atomic<int> ended{0};
  std::vector<std::thread> execs;
  std::vector<std::vector<v1::SandboxEvent>> events(kExecs);
  std::vector<grpc::Status> statuses(kExecs);
  for (int i = 0; i < kExecs; ++i) {
    execs.emplace_back([&, i] {
      events[i] =
          ExecEvents(*stub_, ShExec("k", "exec sleep 7373.7"), &statuses[i], absl::Seconds(120));
      ++ended;
    });
  }
  // Kill until every Exec has ended: each Kill reaches the runs started by then.
  int kills = 0;
  EXPECT_TRUE(PollUntil(
      [&] {
        ++kills;
        EXPECT_TRUE(Kill("k", "race").ok());
        return ended == kExecs;
      },
      absl::Seconds(90), "every Exec to end"));
  for (std::thread& t : execs) t.join();
  for (int i = 0; i < kExecs; ++i) {
    EXPECT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].error_message();
    ASSERT_NE(Last(events[i]), nullptr) << i;
    EXPECT_TRUE(Last(events[i])->has_killed()) << i << ": " << Last(events[i])->DebugString();
  }
  std::cerr << "Execs racing a Kill: " << kExecs << " ended after " << kills << " Kill calls\n";
  EXPECT_TRUE(WaitNoProcessMatches("sleep 7373.7", 10));
  ExpectRuns("k");  // the session outlives the Kill
  ASSERT_TRUE(Destroy("k").ok());
}

TEST_F(BadInputTest, AKillWithAHugeReasonStillKillsAndReportsItBounded) {
  ASSERT_TRUE(Launch("r").ok());
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  auto reader = stub_->Exec(&ctx, ShExec("r", "echo started; exec sleep 7474.4"));
  v1::SandboxEvent event;
  bool started = false;
  while (!started && reader->Read(&event)) started = event.has_stdout();
  ASSERT_TRUE(started);
  v1::KillResponse response;
  const grpc::Status killed = Kill("r", std::string(8 << 20, 'r'), &response);
  EXPECT_TRUE(killed.ok()) << killed.error_message().substr(0, 300);
  EXPECT_TRUE(Bounded(killed, "Kill with an 8 MiB reason"));
  EXPECT_EQ(response.runs_signalled(), 1);
  std::vector<v1::SandboxEvent> rest;
  while (reader->Read(&event)) rest.push_back(event);
  const grpc::Status status = reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message().substr(0, 300);
  ASSERT_NE(Last(rest), nullptr);
  ASSERT_TRUE(Last(rest)->has_killed());
  EXPECT_LT(Last(rest)->killed().detail().size(), kBoundedMessage);
  EXPECT_TRUE(absl::StartsWith(Last(rest)->killed().detail(), "killed: rrr"))
      << Last(rest)->killed().detail().substr(0, 300);
  EXPECT_LT(d_->BrokerLog().size() + d_->LauncherLog().size(), size_t{1} << 20)
      << "the reason went into a log whole";
  EXPECT_TRUE(WaitNoProcessMatches("sleep 7474.4", 10));
  ASSERT_TRUE(Destroy("r").ok());
}

// Bytes that are no protobuf message at every method of both daemons, through Python's generic
// stubs (no serializer): a status, never a crash.
TEST_F(BadInputTest, UndecodableRequestsAtEveryMethodGetAStatus) {
  const std::string script =
      "import grpc, sys\n"
      "ch = grpc.insecure_channel(sys.argv[1])\n"
      "garbage = [b'\\xff' * 64, b'\\x0a\\xff\\xff\\xff\\xff\\x0f', b'\\x0b' * 100000]\n"
      "for method in sys.argv[2:]:\n"
      "    for body in garbage:\n"
      "        call = ch.unary_stream(method) if method.endswith(('/Exec', '/Run', "
      "'/StartSandbox', '/Watch')) else ch.unary_unary(method)\n"
      "        try:\n"
      "            r = call(body, timeout=10)\n"
      "            if not isinstance(r, bytes): r = list(r)\n"
      "            print(method, 'OK')\n"
      "        except grpc.RpcError as e:\n"
      "            print(method, e.code().name, len(e.details() or ''))\n";
  const std::vector<std::string> broker = {
      "/ccsandbox.v1.SandboxBroker/Probe",        "/ccsandbox.v1.SandboxBroker/Launch",
      "/ccsandbox.v1.SandboxBroker/Exec",         "/ccsandbox.v1.SandboxBroker/Kill",
      "/ccsandbox.v1.SandboxBroker/Destroy",      "/ccsandbox.v1.SandboxBroker/GetSession",
      "/ccsandbox.v1.SandboxBroker/ListSessions", "/ccsandbox.v1.SandboxBroker/Suspend",
      "/ccsandbox.v1.SandboxBroker/Resume",       "/grpc.health.v1.Health/Check"};
  const std::vector<std::string> launcher = {
      "/ccsandbox.v1.SandboxLauncher/Probe",        "/ccsandbox.v1.SandboxLauncher/Run",
      "/ccsandbox.v1.SandboxLauncher/StartSandbox", "/ccsandbox.v1.SandboxLauncher/Signal",
      "/ccsandbox.v1.SandboxLauncher/Freeze",       "/grpc.health.v1.Health/Check"};
  for (const auto& [address, methods] : {std::pair{d_->broker_address(), broker},
                                         std::pair{"unix:" + d_->launcher_socket(), launcher}}) {
    std::vector<std::string> argv = {"/usr/bin/python3", "-c", script, address};
    argv.insert(argv.end(), methods.begin(), methods.end());
    ProgramResult r = RunProgram(argv);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    std::cerr << r.out;
    for (const std::string& method : methods) {
      EXPECT_EQ(CountOf(r.out, method + " "), 3) << r.out;
    }
    // A request that decodes to nothing useful may still be answered (Probe, ListSessions);
    // what is refused says so briefly.
    for (const char* code : {"INTERNAL", "UNKNOWN", "UNAVAILABLE", "DEADLINE_EXCEEDED"}) {
      EXPECT_FALSE(absl::StrContains(r.out, code)) << address << "\n" << r.out;
    }
  }
  ASSERT_EQ(kill(d_->launcher_pid(), 0), 0) << "the launcher died";
  ASSERT_EQ(kill(d_->broker_pid(), 0), 0) << "the broker died";
}

// Spec files sandboxctl cannot use: refused with 125 and a short message before anything is
// launched, whatever their size or shape.
TEST_F(BadInputTest, SandboxctlRefusesSpecsItCannotUseBriefly) {
  char made[] = "/tmp/ccs-specs.XXXXXX";
  ASSERT_NE(mkdtemp(made), nullptr);
  const std::string dir = made;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string nested = "{\"mode\": ";
  for (int i = 0; i < 100000; ++i) nested += "{\"a\": ";
  nested += "1" + std::string(100000, '}') + "}";
  const std::vector<std::pair<std::string, std::string>> specs = {
      {"empty", write("empty.json", "")},
      {"not JSON", write("garbage.json", std::string(4096, '\x01'))},
      {"100,000 nested arrays", write("deep.json", deep)},
      {"100,000 nested objects", write("nested.json", nested)},
      {"invalid UTF-8", write("utf8.json", "{\"mode\": \"re\xff\xfeview\"}")},
      {"a 20 MB string", write("huge.json", "{\"mode\": \"" + std::string(20 << 20, 'm') + "\"}")},
      {"a 20 MB key", write("key.json", "{\"" + std::string(20 << 20, 'k') + "\": 1}")},
      {"a number for a string", write("number.json", "{\"mode\": 1e999999}")},
      {"a directory", dir},
      {"no such file", dir + "/missing.json"},
      {"endless", "/dev/zero"},
  };
  for (const auto& [name, path] : specs) {
    const absl::Time start = absl::Now();
    ProgramResult r = d_->Sandboxctl({"run", "--spec=" + path, "--", "echo", "ran"}, work_);
    EXPECT_EQ(r.exit_code, 125) << name << ": " << r.err.substr(0, 300);
    EXPECT_LT(r.err.size(), kBoundedMessage) << name << ": " << r.err.substr(0, 300);
    EXPECT_FALSE(absl::StrContains(r.out, "ran")) << name;
    std::cerr << name << " (" << absl::ToDoubleSeconds(absl::Now() - start)
              << " s): " << r.err.substr(0, r.err.find('\n')) << "\n";
  }
  RunProgram({"rm", "-rf", dir});
  grpc::ClientContext ctx;
  v1::ListSessionsResponse list;
  ASSERT_TRUE(stub_->ListSessions(&ctx, v1::ListSessionsRequest(), &list).ok());
  EXPECT_EQ(list.sessions_size(), 0);
}

}  // namespace
}  // namespace ccsandbox::testing
