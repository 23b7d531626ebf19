#include "launcher/sandbox_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "launcher/run_supervisor.h"
#include "launcher/sh_process_spec.h"
#include "tests/process_exit.h"

namespace ccsandbox::launcher {
namespace {

class RecordingSink : public EventSink {
 public:
  std::vector<v1::SandboxEvent> events;
  bool cancel = false;
  // Notified once the command has run far enough to print.
  std::shared_ptr<absl::Notification> first_stdout = std::make_shared<absl::Notification>();
  bool Emit(const v1::SandboxEvent& e) override {
    events.push_back(e);
    if (e.has_stdout() && !first_stdout->HasBeenNotified()) first_stdout->Notify();
    return true;
  }
  bool Cancelled() override { return cancel; }
  std::string Stdout() const {
    std::string out;
    for (const auto& e : events) out += e.stdout();
    return out;
  }
};

struct Result {
  RunOutcome outcome;
  RecordingSink sink;
};

// Runs `spec` under Supervise; `during`, if given, runs meanwhile on a thread of its own.
Result RunToEnd(const ProcessSpec& spec, SuperviseOptions options = {},
                std::function<void(RunControl&, RecordingSink&)> during = nullptr) {
  auto process = SandboxProcess::Spawn(spec);
  EXPECT_TRUE(process.ok()) << process.status();
  auto control = RunControl::Create();
  Result result;
  std::thread t;
  if (during) t = std::thread([&] { during(**control, result.sink); });
  result.outcome = Supervise(**process, **control, options, result.sink);
  if (t.joinable()) t.join();
  return result;
}

// Still running after up to 2 s. An orphan killed with its group is reaped by whoever adopted
// it, so it may be a zombie for a moment: that counts as gone.
bool ProcessAlive(pid_t pid) { return !ccsandbox::testing::ExitsWithin(pid, absl::Seconds(2)); }

TEST(SandboxProcess, StreamsOutputAndExitCode) {
  Result r = RunToEnd(Sh("echo out; echo err >&2; exit 7"));
  EXPECT_EQ(r.outcome, RunOutcome::kExited);
  EXPECT_EQ(r.sink.Stdout(), "out\n");
  ASSERT_FALSE(r.sink.events.empty());
  EXPECT_EQ(r.sink.events.back().exit().exit_code(), 7);
}

TEST(SandboxProcess, FeedsStdin) {
  SuperviseOptions options;
  options.stdin_data = std::string(1 << 20, 'x');  // larger than a pipe buffer
  Result r = RunToEnd(Sh("wc -c"), options);
  EXPECT_EQ(r.sink.Stdout(), "1048576\n");
}

TEST(SandboxProcess, LeaksNoDescriptors) {
  int leaked[2];
  ASSERT_EQ(pipe(leaked), 0);  // not O_CLOEXEC on purpose
  Result r = RunToEnd(Sh("ls /proc/self/fd | sort -n | tr '\\n' ' '"));
  close(leaked[0]);
  close(leaked[1]);
  // 0, 1, 2 and the directory fd ls itself opens.
  EXPECT_EQ(r.sink.Stdout(), "0 1 2 3 ");
}

TEST(SandboxProcess, TimeoutKillsTheWholeGroup) {
  SuperviseOptions options;
  options.timeout = std::chrono::milliseconds(300);
  Result r = RunToEnd(Sh("sleep 60 & echo $!; wait"), options);
  EXPECT_EQ(r.outcome, RunOutcome::kKilled);
  ASSERT_TRUE(r.sink.events.back().has_killed());
  EXPECT_EQ(r.sink.events.back().killed().reason(), "timeout");
  EXPECT_EQ(r.sink.events.back().killed().detail(), "timeout after 300 ms");
  const pid_t child = std::stoi(r.sink.Stdout());
  EXPECT_FALSE(ProcessAlive(child)) << "background child survived";
}

TEST(SandboxProcess, LeftoversDieWhenTheCommandExits) {
  Result r = RunToEnd(Sh("sleep 60 >/dev/null 2>&1 & echo $!"));
  EXPECT_EQ(r.outcome, RunOutcome::kExited);
  const pid_t child = std::stoi(r.sink.Stdout());
  EXPECT_FALSE(ProcessAlive(child));
}

TEST(SandboxProcess, SignalRequestEndsTheRunAsKilled) {
  Result r =
      RunToEnd(Sh("echo started; exec sleep 60"), {}, [](RunControl& control, RecordingSink& sink) {
        // Once the command runs (or after 30 s, so the run ends either way).
        EXPECT_TRUE(sink.first_stdout->WaitForNotificationWithTimeout(absl::Seconds(30)));
        control.RequestSignal(SIGKILL, {"stopped", "killed by request"});
      });
  EXPECT_EQ(r.outcome, RunOutcome::kKilled);
  EXPECT_EQ(r.sink.events.back().killed().reason(), "stopped");
  EXPECT_EQ(r.sink.events.back().killed().detail(), "killed by request");
  EXPECT_EQ(r.sink.events.back().killed().signal(), SIGKILL);
}

TEST(SandboxProcess, CancellationEmitsNothingFinal) {
  auto process = SandboxProcess::Spawn(Sh("sleep 60"));
  ASSERT_TRUE(process.ok());
  const pid_t pid = (*process)->pid();
  auto control = RunControl::Create();
  RecordingSink sink;
  sink.cancel = true;
  EXPECT_EQ(Supervise(**process, **control, {}, sink), RunOutcome::kCancelled);
  EXPECT_TRUE(sink.events.empty());
  EXPECT_FALSE(ProcessAlive(pid));
}

TEST(SandboxProcess, ReportsViolationsAfterTheStderrThatShowsThem) {
  SuperviseOptions options;
  options.report_violations = true;
  Result r = RunToEnd(Sh("echo fine >&2; printf \"touch: cannot touch '/etc/x': Read-only \" >&2; "
                         "echo 'file system' >&2; echo out"),
                      options);
  std::vector<std::string> kinds;
  for (const auto& e : r.sink.events) {
    if (e.has_violation()) {
      EXPECT_EQ(e.violation().action(), "file-write*");
      EXPECT_EQ(e.violation().target(), "/etc/x");
      EXPECT_EQ(e.violation().raw(), "touch: cannot touch '/etc/x': Read-only file system");
    }
    kinds.push_back(e.has_violation() ? "violation" : e.has_stderr() ? "stderr" : "other");
  }
  ASSERT_EQ(std::count(kinds.begin(), kinds.end(), "violation"), 1);
  auto v = std::find(kinds.begin(), kinds.end(), "violation");
  EXPECT_NE(std::find(kinds.begin(), v, "stderr"), v);  // stderr came first
  options.report_violations = false;
  Result quiet = RunToEnd(Sh("echo \"cat: /x: Permission denied\" >&2"), options);
  for (const auto& e : quiet.sink.events) EXPECT_FALSE(e.has_violation());
}

TEST(SandboxProcess, ExecFailureIsAStatus) {
  ProcessSpec spec = Sh("true");
  spec.executable = "/nonexistent/binary";
  auto process = SandboxProcess::Spawn(spec);
  EXPECT_EQ(process.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(process.status().message().find("execve"), std::string::npos);
}

TEST(SandboxProcess, DestructorKillsAndReaps) {
  pid_t pid;
  {
    auto process = SandboxProcess::Spawn(Sh("sleep 60"));
    ASSERT_TRUE(process.ok());
    pid = (*process)->pid();
  }
  EXPECT_FALSE(ProcessAlive(pid));
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);  // already reaped: no zombie
}

TEST(SandboxProcess, SwitchesIdentityWhenRoot) {
  ASSERT_EQ(geteuid(), 0u) << "switching uid needs root (CI runs as root)";
  ProcessSpec spec = Sh("id -u; id -g; id -G");
  spec.identity = Identity{65534, 65534, {}};
  Result r = RunToEnd(spec);
  EXPECT_EQ(r.sink.Stdout(), "65534\n65534\n65534\n");
}

TEST(FindExecutable, SearchesTheGivenPath) {
  EXPECT_EQ(FindExecutable("sh", "/nonexistent:/bin"), "/bin/sh");
  EXPECT_EQ(FindExecutable("/x/y", ""), "/x/y");
  EXPECT_FALSE(FindExecutable("no-such-binary-xyz", "/bin:/usr/bin").has_value());
}

}  // namespace
}  // namespace ccsandbox::launcher
