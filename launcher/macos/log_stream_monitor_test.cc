// The log-stream wiring on Linux, with stand-in `log` commands (tail -f of a file the test
// appends corpus lines to; sh -c cat, which ends at once) printing lines from
// policy/violations/testdata/seatbelt_log_corpus.tsv rewritten to name the pids of real child
// processes: attribution by the real process tree, storms folded into one event with its count,
// noise dropped, nothing for a run after its removal, and a stream that ends reported, reaped
// and restarted. This tests our plumbing and the corpus's shape, not macOS's `log`.
#include "launcher/macos/log_stream_monitor.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "launcher/macos/macos_test_support.h"
#include "tests/poll_until.h"

namespace ccsandbox::launcher::macos {
namespace {

using ::ccsandbox::testing::PollUntil;
using testing::CorpusLine;
using testing::RecordingSink;

// The recorder as a LogStreamMonitor's sink of one run.
RunSink SinkOf(RecordingSink& sink) {
  return [&sink](const v1::SandboxEvent& e) { sink.Emit(e); };
}

class LogStreamMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/log-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fd_ = UniqueFd(open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd_.valid());
  }

  void Print(const std::string& line) {
    const std::string text = line + "\n";
    ASSERT_EQ(write(fd_.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }

  static std::unique_ptr<SpawnedProcess> Child(const std::string& script) {
    absl::StatusOr<std::unique_ptr<SpawnedProcess>> child = SpawnedProcess::Spawn(
        {.executable = "/bin/sh", .argv = {"sh", "-c", script}, .envp = {"PATH=/usr/bin:/bin"}});
    EXPECT_TRUE(child.ok()) << child.status();
    return child.ok() ? *std::move(child) : nullptr;
  }

  std::string log_;
  UniqueFd fd_;
};

TEST_F(LogStreamMonitorTest, DenialsReachTheirRunFoldedWithoutNoiseAndNothingAfterRemoval) {
  // Run 1: a shell (the root) with a grandchild; run 2: a lone process.
  std::unique_ptr<SpawnedProcess> root1 = Child("sleep 1000 & echo $!; wait");
  std::unique_ptr<SpawnedProcess> root2 = Child("exec sleep 1000");
  ASSERT_TRUE(root1 != nullptr && root2 != nullptr);
  std::string first_line;
  char c;
  while (read(root1->stdout_fd(), &c, 1) == 1 && c != '\n') first_line += c;
  int64_t grandchild = 0;
  ASSERT_TRUE(absl::SimpleAtoi(first_line, &grandchild)) << first_line;

  LogStreamOptions options;
  options.command = {"/usr/bin/tail", "-n", "+1", "-f", log_};
  options.window = absl::Hours(1);  // storms end only at RemoveRun here: what is folded is exact
  absl::StatusOr<std::unique_ptr<LogStreamMonitor>> monitor = LogStreamMonitor::Start(options);
  ASSERT_TRUE(monitor.ok()) << monitor.status();
  RecordingSink sink1, sink2;
  (*monitor)->AddRun("r1", root1->pid(), SinkOf(sink1));
  (*monitor)->AddRun("r2", root2->pid(), SinkOf(sink2));

  const std::string env_write = CorpusLine("denial", "file-write-create", grandchild);
  for (int i = 0; i < 5; ++i) Print(env_write);  // a retry storm of the grandchild
  Print(CorpusLine("denial", "network-outbound", root1->pid()));
  Print(CorpusLine("noise", "file-read-data", root1->pid()));  // dyld's DTrace probe
  Print(CorpusLine("-", "-", 0));                              // not a denial
  Print(CorpusLine("denial", "process-exec*", getpid()));      // no run's: the test itself
  ASSERT_TRUE(PollUntil([&] { return (*monitor)->lines() >= 9; }, absl::Seconds(30),
                        "the stream to print the first 9 lines"));
  EXPECT_TRUE(sink1.events().empty());  // folded storms wait for their window (or the run's end)

  (*monitor)->RemoveRun("r1");
  const std::vector<v1::SandboxEvent> run1 = sink1.events();
  ASSERT_EQ(run1.size(), 2u);
  EXPECT_EQ(run1[0].violation().action(), "file-write-create");
  EXPECT_EQ(run1[0].violation().target(), "/private/tmp/x/.env");
  EXPECT_EQ(run1[0].violation().count(), 5u);
  EXPECT_EQ(run1[0].violation().raw(), env_write);
  EXPECT_EQ(run1[1].violation().action(), "network-outbound");
  EXPECT_EQ(run1[1].violation().target(), "1.2.3.4:443");
  EXPECT_EQ(run1[1].violation().count(), 1u);
  EXPECT_TRUE(sink2.events().empty());
  EXPECT_EQ((*monitor)->noise(), 1u);
  EXPECT_EQ((*monitor)->unattributed(), 1u);

  // After its removal, run 1's processes are nobody's; run 2 still gets its own.
  Print(CorpusLine("denial", "network-outbound", grandchild));
  Print(CorpusLine("denial", "file-read-data", root2->pid()));
  ASSERT_TRUE(PollUntil([&] { return (*monitor)->lines() >= 11; }, absl::Seconds(30),
                        "the stream to print 2 more lines"));
  (*monitor)->RemoveRun("r2");
  EXPECT_EQ(sink1.events().size(), 2u);
  ASSERT_EQ(sink2.events().size(), 1u);
  EXPECT_EQ(sink2.events()[0].violation().action(), "file-read-data");
  EXPECT_EQ(sink2.events()[0].violation().target(), "/Users/dev/.ssh/id_ed25519");
  EXPECT_EQ((*monitor)->unattributed(), 2u);
  EXPECT_EQ((*monitor)->stream_ends(), 0u);
}

TEST_F(LogStreamMonitorTest, AStormIsDeliveredWhenItsWindowEnds) {
  std::unique_ptr<SpawnedProcess> root = Child("exec sleep 1000");
  ASSERT_TRUE(root != nullptr);
  LogStreamOptions options;
  options.command = {"/usr/bin/tail", "-n", "+1", "-f", log_};
  options.window = absl::Milliseconds(20);
  absl::StatusOr<std::unique_ptr<LogStreamMonitor>> monitor = LogStreamMonitor::Start(options);
  ASSERT_TRUE(monitor.ok()) << monitor.status();
  RecordingSink sink;
  (*monitor)->AddRun("r", root->pid(), SinkOf(sink));
  // Printed after AddRun: a line read before it would be nobody's.
  Print(CorpusLine("denial", "file-write-data", root->pid()));
  EXPECT_TRUE(PollUntil([&] { return !sink.events().empty(); }, absl::Seconds(30),
                        "the storm to be delivered without RemoveRun"));
  (*monitor)->RemoveRun("r");
  ASSERT_FALSE(sink.events().empty());
  EXPECT_EQ(sink.events()[0].violation().target(), "/Users/dev/.zshrc");
}

TEST_F(LogStreamMonitorTest, AStreamThatEndsIsReportedReapedAndRestarted) {
  std::unique_ptr<SpawnedProcess> root = Child("exec sleep 1000");
  ASSERT_TRUE(root != nullptr);
  Print(CorpusLine("denial", "file-write-unlink", root->pid()));
  absl::Mutex mu;
  std::vector<std::string> ends;
  LogStreamOptions options;
  options.command = {"/bin/sh", "-c", "cat \"$0\"", log_};  // prints the line and ends
  options.window = absl::Hours(1);
  options.restart_delay = absl::Milliseconds(1);
  options.on_stream_end = [&](const std::string& why) {
    absl::MutexLock lock(&mu);
    ends.push_back(why);
  };
  absl::StatusOr<std::unique_ptr<LogStreamMonitor>> monitor = LogStreamMonitor::Start(options);
  ASSERT_TRUE(monitor.ok()) << monitor.status();
  RecordingSink sink;
  (*monitor)->AddRun("r", root->pid(), SinkOf(sink));
  const uint64_t before = (*monitor)->lines();  // lines read before AddRun are nobody's
  ASSERT_TRUE(PollUntil([&] { return (*monitor)->stream_ends() >= 3; }, absl::Seconds(30),
                        "the stream to end and be restarted 3 times"));
  (*monitor)->RemoveRun("r");
  const uint64_t after = (*monitor)->lines();
  ASSERT_EQ(sink.events().size(), 1u);
  // Every restart printed the line again; those read while the run was registered are folded.
  EXPECT_GE(sink.events()[0].violation().count(), 1u);
  EXPECT_LE(sink.events()[0].violation().count(), after - before + 1);
  absl::MutexLock lock(&mu);
  ASSERT_GE(ends.size(), 3u);
  EXPECT_NE(ends[0].find("/bin/sh ended (exit status 0)"), std::string::npos) << ends[0];
  EXPECT_NE(ends[0].find("not reported"), std::string::npos) << ends[0];
}

TEST_F(LogStreamMonitorTest, AStreamThatCannotStartIsAnError) {
  LogStreamOptions options;
  options.command = {"/nonexistent/log", "stream"};
  absl::StatusOr<std::unique_ptr<LogStreamMonitor>> monitor = LogStreamMonitor::Start(options);
  EXPECT_EQ(monitor.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(monitor.status().message().find("/nonexistent/log"), std::string::npos);
  options.command = {"log", "stream"};
  EXPECT_EQ(LogStreamMonitor::Start(options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ccsandbox::launcher::macos
