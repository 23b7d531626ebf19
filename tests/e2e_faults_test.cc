// Faults under real work: kill -9 of the launcher during 8 running Execs ends each with a
// `killed` event, leaves no process of theirs and the same broker serves a new launcher; kill -9
// of the broker leaves no sandbox once the launcher notices (the time printed); SIGTERM to both
// daemons at once under load exits 0 and removes their sockets. (A client that stops reading its
// stream is e2e_client_test's; the launcher restarted by SIGTERM, e2e_grpc_test's.) A broker
// that boots while the launcher is down uses it once it comes up.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"
#include "tests/leak_census.h"
#include "tests/poll_until.h"
#include "tests/process_exit.h"
#include "tests/review_sessions.h"

namespace ccsandbox::testing {
namespace {

constexpr int kRuns = 8;

// An Exec read to its end on a thread of its own; `started` once the command printed.
class RunningExec {
 public:
  RunningExec(v1::SandboxBroker::Stub& stub, v1::ExecRequest request)
      : thread_([this, &stub, request] {
          grpc::ClientContext ctx;
          ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
          auto reader = stub.Exec(&ctx, request);
          v1::SandboxEvent event;
          while (reader->Read(&event)) {
            if (event.has_stdout() && !started_.HasBeenNotified()) started_.Notify();
            events_.push_back(event);
          }
          status_ = reader->Finish();
        }) {}
  ~RunningExec() {
    if (thread_.joinable()) thread_.join();
  }

  bool WaitStarted() { return started_.WaitForNotificationWithTimeout(absl::Seconds(60)); }
  // Waits for the stream's end.
  const std::vector<v1::SandboxEvent>& Finish() {
    thread_.join();
    return events_;
  }
  const grpc::Status& status() const { return status_; }

 private:
  absl::Notification started_;
  std::vector<v1::SandboxEvent> events_;
  grpc::Status status_;
  std::thread thread_;
};

class FaultsTest : public ReviewSessionsTest {
 protected:
  // kRuns sessions, each running `sleep MARKER.i` once it has printed "started".
  std::vector<std::unique_ptr<RunningExec>> StartRuns(const std::string& marker) {
    std::vector<std::unique_ptr<RunningExec>> runs;
    for (int i = 0; i < kRuns; ++i) {
      const std::string id = absl::StrCat("run", i);
      grpc::Status launched = Launch(id);
      EXPECT_TRUE(launched.ok()) << launched.error_message();
      runs.push_back(std::make_unique<RunningExec>(
          *stub_, ShExec(id, absl::StrCat("echo started; exec sleep ", marker, ".", i))));
    }
    for (auto& run : runs) EXPECT_TRUE(run->WaitStarted()) << d_->LauncherLog();
    return runs;
  }

  // A new session runs a command to its end, and goes with it.
  void ExpectANewRunWorks(const std::string& id) {
    grpc::Status launched = Launch(id);
    ASSERT_TRUE(launched.ok()) << launched.error_message();
    grpc::Status status;
    v1::ExecRequest request = ShExec(id, "echo back");
    request.set_destroy_session_after(true);
    std::vector<v1::SandboxEvent> events = ExecEvents(*stub_, request, &status, absl::Seconds(60));
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(StdoutOf(events), "back\n");
    EXPECT_EQ(ExitOf(events), 0);
  }
};

// How long until none of `processes` runs (at most `bound`), in seconds; -1 past the bound.
double SecondsUntilNoneRuns(const std::vector<ProcessId>& processes, absl::Duration bound) {
  const absl::Time start = absl::Now();
  const bool gone = PollUntil(
      [&] {
        for (const ProcessId& p : processes) {
          if (StillRuns(p)) return false;
        }
        return true;
      },
      bound, "the sandboxes' processes to end");
  return gone ? absl::ToDoubleSeconds(absl::Now() - start) : -1;
}

std::string Survivors(const std::vector<ProcessId>& processes) {
  std::string out;
  for (const ProcessId& p : processes) {
    if (StillRuns(p)) absl::StrAppend(&out, p.pid, " (", p.comm, ") ");
  }
  return out;
}

TEST_F(FaultsTest, KillNineOfTheLauncherEndsEveryRunKilledAndTheSameBrokerServesItsSuccessor) {
  const pid_t broker = d_->broker_pid();
  // After one run, so that what the broker makes once (gRPC's pollers) is in the census.
  ExpectANewRunWorks("warm-up");
  LeakCensus before = LeakCensus::Take(*d_, {work_});
  auto runs = StartRuns("9101");
  ASSERT_TRUE(WaitForProcessMatching(absl::StrCat("sleep 9101.", kRuns - 1), 10));
  const std::vector<ProcessId> sandboxes = Descendants(d_->launcher_pid());
  int bwraps = 0;
  for (const ProcessId& p : sandboxes) bwraps += p.comm == "bwrap";
  EXPECT_GE(bwraps, kRuns) << "one bwrap per session expected below the launcher";

  ASSERT_EQ(kill(d_->launcher_pid(), SIGKILL), 0);
  const double gone = SecondsUntilNoneRuns(sandboxes, absl::Seconds(10));
  EXPECT_GE(gone, 0) << "outlived the launcher: " << Survivors(sandboxes);
  EXPECT_FALSE(AnyProcessMatches("sleep 9101."));
  std::cerr << "launcher kill -9: " << sandboxes.size() << " processes below it (" << bwraps
            << " bwrap) gone after " << gone << " s\n";

  for (auto& run : runs) {
    const std::vector<v1::SandboxEvent>& events = run->Finish();
    EXPECT_TRUE(run->status().ok()) << run->status().error_message();
    ASSERT_NE(Last(events), nullptr);
    ASSERT_TRUE(Last(events)->has_killed()) << Last(events)->DebugString();
    EXPECT_EQ(Last(events)->killed().reason(), "launcher-restart")
        << Last(events)->killed().detail();
  }
  // The broker neither died nor restarted, and serves the launcher that comes up next.
  EXPECT_EQ(d_->broker_pid(), broker);
  EXPECT_FALSE(ExitsWithin(broker, absl::ZeroDuration())) << d_->BrokerLog();
  ASSERT_TRUE(d_->RestartLauncher().ok());
  ExpectANewRunWorks("after-launcher-kill");
  // Once the sessions are gone, nothing of the killed launcher's is left either: its successor
  // removed its cgroups.
  for (int i = 0; i < kRuns; ++i) EXPECT_TRUE(Destroy(absl::StrCat("run", i)).ok()) << i;
  before.files.push_back(d_->dir() + "/launcher2.log");  // the successor's
  std::sort(before.files.begin(), before.files.end());
  EXPECT_TRUE(LeakCensus::SettlesTo(before, *d_, {work_}, absl::Seconds(30)));
}

TEST_F(FaultsTest, KillNineOfTheBrokerLeavesNoSandboxOnceTheLauncherNotices) {
  const LeakCensus launcher_before = LeakCensus::Take(*d_, {work_});
  auto runs = StartRuns("9202");
  const std::vector<ProcessId> sandboxes = Descendants(d_->launcher_pid());
  ASSERT_GE(sandboxes.size(), static_cast<size_t>(kRuns));

  d_->CrashBroker();
  const double gone = SecondsUntilNoneRuns(sandboxes, absl::Seconds(10));
  EXPECT_GE(gone, 0) << "outlived the broker: " << Survivors(sandboxes);
  EXPECT_FALSE(AnyProcessMatches("sleep 9202."));
  std::cerr << "broker kill -9: " << sandboxes.size() << " sandbox processes gone after " << gone
            << " s\n";
  for (auto& run : runs) {
    run->Finish();
    EXPECT_FALSE(run->status().ok()) << "a stream from a dead broker ended OK";
  }
  // The launcher lives on holding nothing of the broker's: no process, descriptor or cgroup.
  EXPECT_FALSE(ExitsWithin(d_->launcher_pid(), absl::ZeroDuration())) << d_->LauncherLog();
  // (The broker's socket and runtime files stay: its successor clears them at boot.)
  std::string differences;
  EXPECT_TRUE(PollUntil(
      [&] {
        LeakCensus now = LeakCensus::Take(*d_, {work_});
        now.broker_fds = launcher_before.broker_fds;
        ++now.launcher_fds["socket"];  // the broker's connection, gone with it
        now.files = launcher_before.files;
        differences = now.DifferencesFrom(launcher_before);
        return differences.empty();
      },
      absl::Seconds(30), "the launcher to hold what it held before"))
      << differences;
}

TEST_F(FaultsTest, SigtermToBothDaemonsUnderLoadExitsZeroAndRemovesTheirSockets) {
  auto runs = StartRuns("9303");
  // Short one-shot runs keep arriving while the daemons stop.
  std::atomic<bool> stop{false};
  std::atomic<int> short_runs{0};
  std::vector<std::thread> load;
  for (int t = 0; t < 4; ++t) {
    load.emplace_back([&, t] {
      for (int i = 0; !stop; ++i) {
        const std::string id = absl::StrCat("load", t, "-", i);
        if (!Launch(id).ok()) continue;
        v1::ExecRequest request = ShExec(id, "echo x");
        request.set_destroy_session_after(true);
        ExecEvents(*stub_, request, nullptr, absl::Seconds(60));
        ++short_runs;
      }
    });
  }
  ASSERT_TRUE(PollUntil([&] { return short_runs >= 8; }, absl::Seconds(60), "8 short runs"));
  const pid_t broker = d_->broker_pid(), launcher = d_->launcher_pid();
  const std::vector<ProcessId> sandboxes = Descendants(launcher);
  const std::vector<std::string> cgroups = LauncherCgroupDirs(d_->launcher_socket(), launcher);
  ASSERT_EQ(kill(broker, SIGTERM), 0);
  ASSERT_EQ(kill(launcher, SIGTERM), 0);
  EXPECT_TRUE(ExitsWithin(broker, absl::Seconds(15))) << d_->BrokerLog();
  EXPECT_TRUE(ExitsWithin(launcher, absl::Seconds(15))) << d_->LauncherLog();
  stop = true;
  for (std::thread& t : load) t.join();
  const int broker_exit = d_->StopBroker();  // reaps it
  const int launcher_exit = d_->StopLauncher();
  EXPECT_TRUE(WIFEXITED(broker_exit) && WEXITSTATUS(broker_exit) == 0) << broker_exit << "\n"
                                                                       << d_->BrokerLog();
  EXPECT_TRUE(WIFEXITED(launcher_exit) && WEXITSTATUS(launcher_exit) == 0) << launcher_exit << "\n"
                                                                           << d_->LauncherLog();
  EXPECT_FALSE(PathExists(d_->broker_address().substr(sizeof("unix:") - 1)));
  EXPECT_FALSE(PathExists(d_->launcher_socket()));
  EXPECT_FALSE(PathExists(d_->runtime_dir())) << "the broker's runtime dir outlived it";
  for (const std::string& cgroup : cgroups) {
    EXPECT_FALSE(PathExists(cgroup)) << "the launcher's cgroup outlived it";
  }
  EXPECT_GE(SecondsUntilNoneRuns(sandboxes, absl::Seconds(10)), 0) << Survivors(sandboxes);
  EXPECT_FALSE(AnyProcessMatches("sleep 9303."));
  for (auto& run : runs) {
    const std::vector<v1::SandboxEvent>& events = run->Finish();
    ASSERT_NE(Last(events), nullptr);
    EXPECT_TRUE(Last(events)->has_killed()) << Last(events)->DebugString();
  }
  std::cerr << "SIGTERM under load: " << short_runs << " short runs done, " << sandboxes.size()
            << " sandbox processes\n";
}

// The broker boots while the launcher is down: Launch says so (UNAVAILABLE naming the socket),
// and once a launcher comes up on that socket the same broker launches and runs.
TEST(LauncherDownAtBoot, TheBrokerUsesTheLauncherOnceItComesUp) {
  char made[] = "/tmp/ccs-boot.XXXXXX";
  ASSERT_NE(mkdtemp(made), nullptr);
  const std::string dir = made;
  char work_made[] = "/var/tmp/ccs-boot-work.XXXXXX";
  ASSERT_NE(mkdtemp(work_made), nullptr);
  const std::string work = work_made;
  const std::string launcher_socket = dir + "/launcher.sock";
  const std::string broker_socket = dir + "/broker.sock";
  const pid_t broker =
      SpawnDaemon({Runfile("broker/sandbox_brokerd"), "--listen=unix:" + broker_socket,
                   "--launcher=unix:" + launcher_socket, "--runtime-dir=" + dir + ".run"},
                  {}, dir + "/broker.log");
  ASSERT_TRUE(WaitUntilListening(broker_socket, broker, "broker").ok())
      << ReadFile(dir + "/broker.log");
  auto stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel("unix:" + broker_socket, grpc::InsecureChannelCredentials()));
  auto launch = [&](const std::string& id) {
    v1::LaunchRequest request;
    request.mutable_spec()->set_session_id(id);
    request.mutable_spec()->set_mode("review");
    v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
    bind->set_host_path(work);
    bind->set_guest_path(work);
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
    v1::SandboxHandle handle;
    return stub->Launch(&ctx, request, &handle);
  };
  const grpc::Status down = launch("early");
  EXPECT_EQ(down.error_code(), grpc::StatusCode::UNAVAILABLE) << down.error_message();
  EXPECT_TRUE(
      absl::StartsWith(down.error_message(), "launcher not reachable at " + launcher_socket))
      << down.error_message();

  const pid_t launcher = SpawnDaemon(
      {Runfile("launcher/sandbox_launcherd"), "--socket=" + launcher_socket, "--allowed-uids=0"},
      {}, dir + "/launcher.log");
  ASSERT_TRUE(WaitUntilListening(launcher_socket, launcher, "launcher").ok())
      << ReadFile(dir + "/launcher.log");
  grpc::Status up = launch("late");
  EXPECT_TRUE(up.ok()) << up.error_message() << "\n" << ReadFile(dir + "/broker.log");
  grpc::Status status;
  std::vector<v1::SandboxEvent> events =
      ExecEvents(*stub, ShExec("late", "echo up"), &status, absl::Seconds(60));
  EXPECT_TRUE(status.ok()) << status.error_message() << "\n" << ReadFile(dir + "/broker.log");
  EXPECT_EQ(StdoutOf(events), "up\n");
  const int broker_exit = StopDaemon(broker);
  const int launcher_exit = StopDaemon(launcher);
  EXPECT_TRUE(WIFEXITED(broker_exit) && WEXITSTATUS(broker_exit) == 0) << broker_exit;
  EXPECT_TRUE(WIFEXITED(launcher_exit) && WEXITSTATUS(launcher_exit) == 0) << launcher_exit;
  RunProgram({"rm", "-rf", dir, dir + ".run", work});
}

}  // namespace
}  // namespace ccsandbox::testing
