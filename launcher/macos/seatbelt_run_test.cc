// A macOS run end to end through the launcher's run supervisor, on Linux: the stand-in
// sandbox-exec (testdata/fake_sandbox_exec.sh, enforcing nothing) runs the command, a stand-in
// `log` (tail -f of a file the test appends corpus lines to) reports denials naming the run's
// pid, and the run's own event stream gets them, folded, before its exit event; the run has left
// the monitor once it ended. Our plumbing, not Seatbelt.
#include "launcher/macos/seatbelt_run.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "launcher/macos/macos_test_support.h"
#include "launcher/run_control.h"
#include "tests/poll_until.h"

namespace ccsandbox::launcher::macos {
namespace {

using ::ccsandbox::testing::PollUntil;
using testing::CorpusLine;
using testing::RecordingSink;

TEST(SeatbeltRunProcess, ARunsDenialsReachItsStreamBeforeItsExit) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  const std::string log = tmp + "/log";
  const std::string fifo = tmp + "/go";
  const std::string profiles = tmp + "/profiles";
  ASSERT_EQ(mkdir(profiles.c_str(), 0700), 0);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  UniqueFd log_fd(open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  ASSERT_TRUE(log_fd.valid());

  LogStreamOptions stream;
  stream.command = {"/usr/bin/tail", "-n", "+1", "-f", log};
  stream.window = absl::Hours(1);
  absl::StatusOr<std::unique_ptr<LogStreamMonitor>> monitor = LogStreamMonitor::Start(stream);
  ASSERT_TRUE(monitor.ok()) << monitor.status();

  SeatbeltRun run;
  run.argv = {"sh", "-c", absl::StrCat("read go < ", fifo, "; echo done; exit 3")};
  run.env = {{"PATH", "/usr/bin:/bin"}};
  run.workdir = tmp;
  SeatbeltLaunchOptions options;
  options.profile_dir = profiles;
  options.sandbox_exec =
      absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                   "/launcher/macos/testdata/fake_sandbox_exec.sh");
  RecordingSink sink;
  absl::StatusOr<std::unique_ptr<SeatbeltRunProcess>> process = SeatbeltRunProcess::Start(
      "run-7", "(version 1)\n(allow default)\n", run, options, **monitor, sink);
  ASSERT_TRUE(process.ok()) << process.status();
  EXPECT_EQ((*process)->profile_path(), profiles + "/run-7.sb");
  absl::StatusOr<std::unique_ptr<RunControl>> control = RunControl::Create();
  ASSERT_TRUE(control.ok());
  std::thread supervisor([&] { Supervise(**process, **control, SuperviseOptions(), sink); });

  const std::string denial = CorpusLine("denial", "file-read-data", (*process)->pid()) + "\n";
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(write(log_fd.get(), denial.data(), denial.size()),
              static_cast<ssize_t>(denial.size()));
  }
  EXPECT_TRUE(PollUntil([&] { return (*monitor)->lines() >= 3; }, absl::Seconds(30),
                        "the stream to print the run's 3 denials"));
  {  // let the command end
    UniqueFd go(open(fifo.c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_EQ(write(go.get(), "go\n", 3), 3);
  }
  supervisor.join();

  const std::vector<v1::SandboxEvent> events = sink.events();
  int violation_at = -1, exit_at = -1;
  for (int i = 0; i < static_cast<int>(events.size()); ++i) {
    if (events[i].has_violation()) {
      EXPECT_EQ(violation_at, -1) << "one folded event, not several";
      violation_at = i;
      EXPECT_EQ(events[i].violation().action(), "file-read-data");
      EXPECT_EQ(events[i].violation().target(), "/Users/dev/.ssh/id_ed25519");
      EXPECT_EQ(events[i].violation().count(), 3u);
    }
    if (events[i].has_exit()) {
      exit_at = i;
      EXPECT_EQ(events[i].exit().exit_code(), 3);
    }
  }
  ASSERT_NE(violation_at, -1);
  ASSERT_NE(exit_at, -1);
  EXPECT_LT(violation_at, exit_at);

  // The run has left the monitor: a later denial of its pid is nobody's.
  const uint64_t unattributed = (*monitor)->unattributed();
  ASSERT_EQ(write(log_fd.get(), denial.data(), denial.size()), static_cast<ssize_t>(denial.size()));
  EXPECT_TRUE(PollUntil([&] { return (*monitor)->lines() >= 4; }, absl::Seconds(30),
                        "the stream to print the late denial"));
  EXPECT_EQ((*monitor)->unattributed(), unattributed + 1);
  EXPECT_EQ(sink.events().size(), events.size());
}

}  // namespace
}  // namespace ccsandbox::launcher::macos
