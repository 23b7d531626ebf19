// Warm native sessions end to end: Launch starts one sandbox, every Exec runs inside it; what
// persists between Execs and what does not; per-Exec isolation (leftovers, signals, timeouts,
// violations); loud failure when the sandbox dies; nothing left after Destroy, a launcher
// restart or a broker crash.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"
#include "tests/poll_until.h"

namespace ccsandbox::testing {
namespace {

// A warm sandbox's init, as the host sees it: the shim with --init.
constexpr char kInitMarker[] = "/run/ccsandbox/shim --init=";

// Host pids whose command line starts with `prefix` (arguments joined by spaces).
std::vector<pid_t> PidsStartingWith(const std::string& prefix) {
  std::vector<pid_t> pids;
  DIR* dir = opendir("/proc");
  while (dirent* entry = readdir(dir)) {
    const pid_t pid = atoi(entry->d_name);
    if (pid <= 0) continue;
    std::string cmdline = ReadFile(absl::StrCat("/proc/", pid, "/cmdline"));
    for (char& c : cmdline) {
      if (c == '\0') c = ' ';
    }
    if (absl::StartsWith(cmdline, prefix)) pids.push_back(pid);
  }
  closedir(dir);
  return pids;
}

pid_t ParentOf(pid_t pid) {
  const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t close = stat.rfind(')');
  return close == std::string::npos ? 0 : atoi(stat.c_str() + close + 4);
}

// The inits of the warm sandboxes of the launcher `launcher` (other tests' daemons may run at
// the same time): processes running the shim with --init, below that launcher, whose parent
// does not run it too (each Exec's reaper is a fork of the init, with its command line).
std::vector<pid_t> InitsOf(pid_t launcher) {
  std::vector<pid_t> all = PidsStartingWith(kInitMarker), inits;
  for (pid_t pid : all) {
    if (std::find(all.begin(), all.end(), ParentOf(pid)) != all.end()) continue;
    for (pid_t up = ParentOf(pid); up > 1; up = ParentOf(up)) {
      if (up == launcher) {
        inits.push_back(pid);
        break;
      }
    }
  }
  return inits;
}

// True once none of `pids` runs (a zombie counts as gone), within `limit`.
bool AllGone(const std::vector<pid_t>& pids, absl::Duration limit) {
  return PollUntil(
      [&] {
        for (pid_t pid : pids) {
          const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
          const size_t close = stat.rfind(')');
          if (close != std::string::npos && stat.substr(close + 2, 1) != "Z") return false;
        }
        return true;
      },
      limit, "the sandbox's processes to end");
}

class WarmSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto daemons = Daemons::Start();
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    d_ = std::move(*daemons);
    stub_ = v1::SandboxBroker::NewStub(
        grpc::CreateChannel(d_->broker_address(), grpc::InsecureChannelCredentials()));
    work_ = d_->MakeWorkdir();
  }

  // A native session binding the work dir read-write; `guarded` keeps the standard filename
  // denies (the create guard), otherwise they are explicitly turned off.
  grpc::Status Launch(const std::string& id, bool guarded = false,
                      v1::SandboxHandle* out = nullptr) {
    v1::LaunchRequest request;
    request.mutable_spec()->set_session_id(id);
    if (!guarded) request.mutable_spec()->mutable_write_deny_patterns();
    v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
    bind->set_host_path(work_);
    bind->set_guest_path(work_);
    grpc::ClientContext ctx;
    v1::SandboxHandle handle;
    grpc::Status status = stub_->Launch(&ctx, request, &handle);
    if (out != nullptr) *out = handle;
    return status;
  }

  // `deadline`: the client gives up then (CANCELLED/DEADLINE_EXCEEDED in `status`), so a run
  // that never ends fails the test instead of hanging it.
  std::vector<v1::SandboxEvent> Exec(const std::string& session, const std::string& script,
                                     grpc::Status* status = nullptr, uint64_t timeout_ms = 0,
                                     absl::Duration deadline = absl::InfiniteDuration()) {
    return ExecEvents(*stub_, ShExec(session, script, timeout_ms), status, deadline);
  }

  v1::SandboxHandle Get(const std::string& session) {
    grpc::ClientContext ctx;
    v1::SessionRequest request;
    request.set_session_id(session);
    v1::SandboxHandle handle;
    EXPECT_TRUE(stub_->GetSession(&ctx, request, &handle).ok());
    return handle;
  }

  void Kill(const std::string& session) {
    grpc::ClientContext ctx;
    v1::KillRequest request;
    request.set_session_id(session);
    v1::KillResponse response;
    EXPECT_TRUE(stub_->Kill(&ctx, request, &response).ok());
  }

  grpc::Status Destroy(const std::string& session) {
    grpc::ClientContext ctx;
    v1::SessionRequest request;
    request.set_session_id(session);
    v1::SandboxHandle handle;
    return stub_->Destroy(&ctx, request, &handle);
  }

  // Runs `script` in the background until it prints its first line.
  struct Background {
    std::future<std::vector<v1::SandboxEvent>> events;
  };
  Background Start(const std::string& session, const std::string& script) {
    auto started = std::make_shared<std::promise<void>>();
    Background b;
    b.events = std::async(std::launch::async, [this, session, script, started] {
      v1::ExecRequest request;
      request.set_session_id(session);
      request.add_argv("sh");
      request.add_argv("-c");
      request.add_argv(script);
      grpc::ClientContext ctx;
      auto reader = stub_->Exec(&ctx, request);
      std::vector<v1::SandboxEvent> events;
      v1::SandboxEvent event;
      bool told = false;
      while (reader->Read(&event)) {
        events.push_back(event);
        if (!told && event.has_stdout()) {
          told = true;
          started->set_value();
        }
      }
      reader->Finish();
      if (!told) started->set_value();
      return events;
    });
    started->get_future().wait();
    return b;
  }

  std::unique_ptr<Daemons> d_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
  std::string work_;
};

TEST_F(WarmSessionTest, LaunchStartsOneSandboxThatEveryExecRunsIn) {
  v1::SandboxHandle handle;
  ASSERT_TRUE(Launch("w", false, &handle).ok());
  EXPECT_EQ(handle.state(), v1::SANDBOX_STATE_WARM);
  EXPECT_EQ(Get("w").state(), v1::SANDBOX_STATE_WARM);
  ASSERT_EQ(InitsOf(d_->launcher_pid()).size(), 1u) << "one init for the session";
  // The private /tmp and the writable bind persist between the session's Execs ...
  EXPECT_EQ(StdoutOf(Exec("w", "echo one > /tmp/kept; echo bind > kept.txt; echo ok")), "ok\n");
  EXPECT_EQ(StdoutOf(Exec("w", "cat /tmp/kept kept.txt")), "one\nbind\n");
  // ... in the same sandbox: still one init, and no bwrap per Exec.
  EXPECT_EQ(InitsOf(d_->launcher_pid()).size(), 1u);
  // Nothing persists across sessions: another session has its own /tmp.
  ASSERT_TRUE(Launch("other").ok());
  EXPECT_EQ(StdoutOf(Exec("other", "cat /tmp/kept 2>/dev/null || echo absent")), "absent\n");
  EXPECT_EQ(InitsOf(d_->launcher_pid()).size(), 2u);
}

TEST_F(WarmSessionTest, TheSessionIsActiveWhileAnExecRunsAndWarmAfter) {
  ASSERT_TRUE(Launch("s").ok());
  Background held = Start("s", "echo started; exec sleep 30");
  EXPECT_EQ(Get("s").state(), v1::SANDBOX_STATE_ACTIVE);
  Kill("s");
  std::vector<v1::SandboxEvent> events = held.events.get();
  ASSERT_NE(Last(events), nullptr);
  EXPECT_TRUE(Last(events)->has_killed()) << Last(events)->DebugString();
  EXPECT_EQ(Get("s").state(), v1::SANDBOX_STATE_WARM);
}

TEST_F(WarmSessionTest, NoProcessOfAnExecSurvivesIntoTheNext) {
  ASSERT_TRUE(Launch("l").ok());
  const std::string marker = "sleep 1000.713";
  // Double-forked, out of the session and process group, deaf to TERM and HUP, holding the
  // Exec's stdout; the command ends once the leftover says (on a pipe) that its trap is set.
  std::vector<v1::SandboxEvent> events =
      Exec("l", "exec 4>&1; { setsid sh -c 'trap \"\" TERM HUP; echo trapped >&3; exec " + marker +
                    "' 3>&1 >&4 & } | { read ready; echo left; }");
  EXPECT_EQ(StdoutOf(events), "left\n");
  ASSERT_NE(Last(events), nullptr);
  EXPECT_TRUE(Last(events)->has_exit());
  EXPECT_FALSE(AnyProcessMatches(marker)) << "the leftover outlived its Exec";
  EXPECT_EQ(StdoutOf(Exec("l", "ps -e -o comm= | grep -c sleep || true")), "0\n");
}

TEST_F(WarmSessionTest, ExecsOfOneSessionRunSideBySide) {
  ASSERT_TRUE(Launch("c").ok());
  Background slow = Start("c", "echo started; sleep 1; echo slow");
  EXPECT_EQ(StdoutOf(Exec("c", "echo fast")), "fast\n");
  EXPECT_EQ(StdoutOf(slow.events.get()), "started\nslow\n");
}

TEST_F(WarmSessionTest, ACommandCannotSignalTheInitItsReaperOrAnotherExec) {
  ASSERT_TRUE(Launch("k").ok());
  Background other = Start("k", "echo started; exec sleep 30");
  // Every pid it can see but its own: the init, its reaper, the other Exec, bwrap.
  std::vector<v1::SandboxEvent> events =
      Exec("k",
           "kill -9 -1; for p in $(ls /proc | grep '^[0-9]*$'); do "
           "if [ $p != $$ ] && kill -9 $p 2>/dev/null; then echo killed $p; fi; done; "
           "echo done");
  EXPECT_EQ(StdoutOf(events), "done\n");
  EXPECT_EQ(Get("k").state(), v1::SANDBOX_STATE_ACTIVE);  // the other Exec still runs
  Kill("k");
  std::vector<v1::SandboxEvent> held = other.events.get();
  ASSERT_NE(Last(held), nullptr);
  ASSERT_TRUE(Last(held)->has_killed());
  EXPECT_EQ(Last(held)->killed().reason(), "stopped");
  EXPECT_EQ(Last(held)->killed().detail(), "killed by request");
  EXPECT_EQ(StdoutOf(Exec("k", "echo still")), "still\n");
}

// prlimit(2) on another process needs only the same uid, and Landlock does not scope it: a
// command can change the limits of every process it sees in the sandbox.
TEST_F(WarmSessionTest, ACommandCannotChangeTheLimitsOfTheInitItsReaperOrAnotherExec) {
  ASSERT_TRUE(Launch("rl").ok());
  Background other = Start("rl", "echo started; exec sleep 30");
  // Every pid it can see but its own; the probe sets the limit it already has.
  std::vector<v1::SandboxEvent> events =
      Exec("rl",
           "for p in $(ls /proc | grep '^[0-9]*$'); do "
           "if [ $p != $$ ] && prlimit --pid $p --nofile=20000:20000 2>/dev/null; then "
           "echo changed $p; fi; done; echo done");
  EXPECT_EQ(StdoutOf(events), "done\n");
  Kill("rl");
  other.events.get();
}

// With no descriptor to spare, the reaper cannot read /proc: it finds no descendant to kill
// and waits for them forever; the leftover runs on, and the Exec never ends.
TEST_F(WarmSessionTest, AStarvedReaperStillLeavesNoSurvivor) {
  ASSERT_TRUE(Launch("sr").ok());
  const std::string marker = "sleep 1000.541";
  grpc::Status status;
  std::vector<v1::SandboxEvent> events =
      Exec("sr",
           "prlimit --pid $PPID --nofile=3:3; setsid " + marker +
               " </dev/null >/dev/null 2>&1 & echo left",
           &status, /*timeout_ms=*/3000, /*deadline=*/absl::Seconds(15));
  EXPECT_TRUE(status.ok()) << status.error_message();
  ASSERT_NE(Last(events), nullptr);
  EXPECT_TRUE(Last(events)->has_exit() || Last(events)->has_killed())
      << Last(events)->DebugString();
  EXPECT_FALSE(AnyProcessMatches(marker)) << "the leftover outlived its Exec";
  EXPECT_EQ(
      StdoutOf(Exec("sr", "ps -e -o comm= | grep -c sleep || true", nullptr, 0, absl::Seconds(15))),
      "0\n");
}

// The init's open-file limit is the command's to lower: the next Exec's descriptors then do
// not fit, and the init ends the whole sandbox.
TEST_F(WarmSessionTest, ACommandCannotEndTheSandboxThroughTheInitsLimits) {
  ASSERT_TRUE(Launch("il").ok());
  // The init is the parent of the command's reaper ($PPID).
  Exec("il", "prlimit --pid $(cut -d' ' -f4 /proc/$PPID/stat) --nofile=4:4; echo lowered");
  EXPECT_EQ(StdoutOf(Exec("il", "echo still")), "still\n");
  EXPECT_EQ(Get("il").state(), v1::SANDBOX_STATE_WARM) << Get("il").error().message();
}

// The init relays the egress bridge's connections with no cap of its own: a command that holds
// enough of them fills the init's descriptor table, the next Exec's descriptors are cut off
// in transit, and the init ends the whole sandbox.
TEST_F(WarmSessionTest, ConnectionsToTheBridgeCannotEndTheSandbox) {
  ASSERT_TRUE(Launch("bf").ok());
  Background flood = Start(
      "bf",
      "exec python3 -c '\n"
      "import socket, sys, time\n"
      "held = []\n"
      "try:\n"
      "    for _ in range(19000): held.append(socket.create_connection((\"127.0.0.1\", 3128)))\n"
      "except OSError: pass\n"
      "print(\"started\", len(held), flush=True)\n"
      "time.sleep(30)\n"
      "'");
  EXPECT_EQ(StdoutOf(Exec("bf", "echo still")), "still\n");
  EXPECT_EQ(Get("bf").state(), v1::SANDBOX_STATE_ACTIVE) << Get("bf").error().message();
  Kill("bf");
  flood.events.get();
}

TEST_F(WarmSessionTest, ATimeoutEndsTheExecWithItsLeftovers) {
  ASSERT_TRUE(Launch("t").ok());
  const std::string marker = "sleep 1000.919";
  std::vector<v1::SandboxEvent> events =
      Exec("t", "setsid " + marker + " & exec sleep 1000", nullptr, 500);
  ASSERT_NE(Last(events), nullptr);
  ASSERT_TRUE(Last(events)->has_killed()) << Last(events)->DebugString();
  EXPECT_EQ(Last(events)->killed().reason(), "timeout");
  EXPECT_EQ(Last(events)->killed().detail(), "timeout after 500 ms");
  EXPECT_FALSE(AnyProcessMatches(marker));
  EXPECT_EQ(Get("t").state(), v1::SANDBOX_STATE_WARM);
}

// After the deadline the launcher sends SIGKILL at every wake-up until the Exec's end is
// known; one that reaches the init after the reaper exited but before the init reaped it is
// written to a pipe with no reader, and the init (which keeps SIGPIPE's default) dies of it:
// the sandbox exits with code 141 and the session goes to error.
TEST_F(WarmSessionTest, RepeatedTimeoutsLeaveTheSessionWarm) {
  ASSERT_TRUE(Launch("rt").ok());
  for (int i = 0; i < 10; ++i) {
    std::vector<v1::SandboxEvent> events = Exec("rt", "exec sleep 1000", nullptr, 300);
    ASSERT_NE(Last(events), nullptr);
    ASSERT_TRUE(Last(events)->has_killed()) << "run " << i << ": " << Last(events)->DebugString();
    ASSERT_EQ(Get("rt").state(), v1::SANDBOX_STATE_WARM)
        << "run " << i << ": " << Get("rt").error().message();
  }
}

TEST_F(WarmSessionTest, ACreateRefusalReachesOnlyTheExecThatCausedIt) {
  ASSERT_TRUE(Launch("g", /*guarded=*/true).ok());
  Background bystander = Start("g", "echo started; sleep 1; echo done");
  std::vector<v1::SandboxEvent> culprit = Exec("g", "touch .env; echo rc=$?");
  int violations = 0;
  for (const v1::SandboxEvent& e : culprit) {
    if (e.has_violation()) {
      ++violations;
      EXPECT_TRUE(absl::EndsWith(e.violation().target(), "/.env")) << e.DebugString();
    }
  }
  EXPECT_EQ(violations, 1);
  EXPECT_NE(StdoutOf(culprit), "rc=0\n");
  for (const v1::SandboxEvent& e : bystander.events.get()) {
    EXPECT_FALSE(e.has_violation()) << e.DebugString();
  }
  EXPECT_FALSE(PathExists(work_ + "/.env"));
}

TEST_F(WarmSessionTest, ASandboxThatDiesEndsItsExecsAndTheSessionLoudly) {
  ASSERT_TRUE(Launch("d").ok());
  Background held = Start("d", "echo started; exec sleep 30");
  std::vector<pid_t> inits = InitsOf(d_->launcher_pid());
  ASSERT_EQ(inits.size(), 1u);
  ASSERT_EQ(kill(inits[0], SIGKILL), 0);  // killed from the host
  std::vector<v1::SandboxEvent> events = held.events.get();
  ASSERT_NE(Last(events), nullptr);
  ASSERT_TRUE(Last(events)->has_killed()) << Last(events)->DebugString();
  EXPECT_EQ(Last(events)->killed().reason(), "sandbox-ended");
  EXPECT_TRUE(absl::StrContains(Last(events)->killed().detail(), "sandbox ended"))
      << Last(events)->killed().detail();
  ASSERT_TRUE(PollUntil([&] { return Get("d").state() == v1::SANDBOX_STATE_ERROR; },
                        absl::Seconds(10), "the session to go to error"));
  EXPECT_FALSE(Get("d").error().message().empty());
  grpc::Status status;
  Exec("d", "echo never", &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  EXPECT_TRUE(absl::StrContains(status.error_message(), "sandbox ended")) << status.error_message();
  EXPECT_TRUE(Destroy("d").ok());
}

TEST_F(WarmSessionTest, TheInitHoldsNoCapabilityAndNothingOfTheControlPlane) {
  ASSERT_TRUE(Launch("i").ok());
  std::vector<pid_t> inits = InitsOf(d_->launcher_pid());
  ASSERT_EQ(inits.size(), 1u);
  const std::string status = ReadFile(absl::StrCat("/proc/", inits[0], "/status"));
  EXPECT_TRUE(absl::StrContains(status, "CapEff:\t0000000000000000")) << status;
  EXPECT_TRUE(absl::StrContains(status, "CapPrm:\t0000000000000000")) << status;
  EXPECT_TRUE(absl::StrContains(status, "NoNewPrivs:\t1")) << status;
  // Its descriptors: stdio, the channel, the bridge's sockets, the event loop's: nothing that
  // names a host path (no launcher or broker socket, no directory).
  DIR* fds = opendir(absl::StrCat("/proc/", inits[0], "/fd").c_str());
  ASSERT_NE(fds, nullptr);
  while (dirent* entry = readdir(fds)) {
    if (entry->d_name[0] == '.') continue;
    char target[4096] = {};
    const std::string link = absl::StrCat("/proc/", inits[0], "/fd/", entry->d_name);
    ASSERT_GT(readlink(link.c_str(), target, sizeof(target) - 1), 0);
    const std::string what(target);
    EXPECT_TRUE(absl::StartsWith(what, "socket:") || absl::StartsWith(what, "pipe:") ||
                absl::StartsWith(what, "anon_inode:") || what == "/dev/null")
        << "fd " << entry->d_name << " -> " << what;
  }
  closedir(fds);
}

TEST_F(WarmSessionTest, DestroyReturnsWithNothingOfTheSessionRunning) {
  ASSERT_TRUE(Launch("x").ok());
  Background held = Start("x", "echo started; exec sleep 30");
  ASSERT_TRUE(Destroy("x").ok());
  EXPECT_TRUE(InitsOf(d_->launcher_pid()).empty());
  std::vector<v1::SandboxEvent> events = held.events.get();
  ASSERT_NE(Last(events), nullptr);
  EXPECT_TRUE(Last(events)->has_killed());
}

TEST_F(WarmSessionTest, ALauncherRestartPutsWarmSessionsInError) {
  ASSERT_TRUE(Launch("r").ok());
  const std::vector<pid_t> inits = InitsOf(d_->launcher_pid());
  ASSERT_EQ(inits.size(), 1u);
  ASSERT_TRUE(d_->RestartLauncher().ok());
  EXPECT_TRUE(AllGone(inits, absl::Seconds(5)));
  ASSERT_TRUE(PollUntil([&] { return Get("r").state() == v1::SANDBOX_STATE_ERROR; },
                        absl::Seconds(10), "the session to go to error"));
  grpc::Status status;
  Exec("r", "echo never", &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  // A new session works with the new launcher.
  ASSERT_TRUE(Launch("r2").ok());
  EXPECT_EQ(StdoutOf(Exec("r2", "echo back")), "back\n");
}

TEST_F(WarmSessionTest, ACrashedBrokerLeavesNoSandbox) {
  ASSERT_TRUE(Launch("b").ok());
  const std::vector<pid_t> inits = InitsOf(d_->launcher_pid());
  ASSERT_EQ(inits.size(), 1u);
  d_->CrashBroker();
  EXPECT_TRUE(AllGone(inits, absl::Seconds(2)));
}

}  // namespace
}  // namespace ccsandbox::testing
