#include "policy/violations/seatbelt_monitor.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

std::string Denial(int64_t pid, absl::string_view action, absl::string_view target) {
  return absl::StrCat(
      R"({"eventMessage":"Sandbox: proc()", pid, ") deny(1) ", action, " ", target,
      R"(","processID":0,"messageType":"Error","timestamp":"2026-12-02 21:07:35.1+0000"})");
}

// A fake process table and clock: no real processes, no real time.
struct Fixture {
  std::map<int64_t, int64_t> parents;
  absl::Time now = absl::FromUnixSeconds(1000);
  SeatbeltMonitor monitor{[this](int64_t pid) -> std::optional<int64_t> {
                            auto it = parents.find(pid);
                            if (it == parents.end()) return std::nullopt;
                            return it->second;
                          },
                          [this] { return now; }, absl::Seconds(1)};

  // Run "a" rooted at 100 (child 101), run "b" at 200 (child 201).
  void TwoRuns() {
    parents = {{101, 100}, {201, 200}};
    monitor.AddRun("a", 100);
    monitor.AddRun("b", 200);
  }
};

TEST(SeatbeltMonitor, AttributesByPidTree) {
  Fixture f;
  f.parents = {{100, 1}, {101, 100}, {102, 101}, {200, 1}, {201, 200}, {300, 1}};
  f.monitor.AddRun("run-a", 100);
  f.monitor.AddRun("run-b", 200);
  EXPECT_EQ(f.monitor.RunOf(100), "run-a");
  EXPECT_EQ(f.monitor.RunOf(102), "run-a");
  EXPECT_EQ(f.monitor.RunOf(201), "run-b");
  EXPECT_EQ(f.monitor.RunOf(300), std::nullopt);  // a host process, in no run
  EXPECT_EQ(f.monitor.RunOf(999), std::nullopt);  // unknown pid
  f.parents[7] = 7;                               // a cycle in a broken table ends the walk
  EXPECT_EQ(f.monitor.RunOf(7), std::nullopt);
  f.parents = {{10, 11}, {11, 10}};
  EXPECT_EQ(f.monitor.RunOf(10), std::nullopt);
}

TEST(SeatbeltMonitor, DeepChainsStopAtTheBound) {
  Fixture f;
  f.monitor.AddRun("run", 1000);
  for (int64_t pid = 1001; pid <= 1000 + SeatbeltMonitor::kMaxAncestry + 10; ++pid) {
    f.parents[pid] = pid - 1;
  }
  EXPECT_EQ(f.monitor.RunOf(1000 + SeatbeltMonitor::kMaxAncestry), "run");
  EXPECT_EQ(f.monitor.RunOf(1000 + SeatbeltMonitor::kMaxAncestry + 2), std::nullopt);
}

TEST(SeatbeltMonitor, DropsNoiseAndUnattributedAndGarbage) {
  Fixture f;
  f.parents = {{101, 100}};
  f.monitor.AddRun("run", 100);
  EXPECT_TRUE(f.monitor.Feed(Denial(101, "file-read-data", "/dev/dtracehelper")).empty());
  EXPECT_TRUE(f.monitor.Feed(Denial(555, "file-read-data", "/etc/secret")).empty());
  EXPECT_TRUE(f.monitor.Feed("not json").empty());
  f.now += absl::Seconds(5);
  EXPECT_TRUE(f.monitor.Flush().empty());
  EXPECT_EQ(f.monitor.noise(), 1u);
  EXPECT_EQ(f.monitor.unattributed(), 1u);
}

TEST(SeatbeltMonitor, StormOfTenThousandIsOneEventWithItsCount) {
  Fixture f;
  f.parents = {{101, 100}};
  f.monitor.AddRun("run", 100);
  const std::string line = Denial(101, "file-write-create", "/private/tmp/x/.env");
  for (int i = 0; i < 10000; ++i) {
    EXPECT_TRUE(f.monitor.Feed(line).empty());
  }
  EXPECT_TRUE(f.monitor.Flush().empty());  // the window is still open
  f.now += absl::Seconds(1);
  const std::vector<RunViolation> out = f.monitor.Flush();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].run_id, "run");
  EXPECT_EQ(out[0].count, 10000u);
  EXPECT_EQ(out[0].pid, 101);
  EXPECT_EQ(out[0].violation.action(), "file-write-create");
  EXPECT_EQ(out[0].violation.target(), "/private/tmp/x/.env");
  EXPECT_EQ(out[0].violation.raw(), line);
  EXPECT_TRUE(f.monitor.Flush().empty());

  // After the window, the same denial opens a new storm.
  f.monitor.Feed(line);
  f.now += absl::Seconds(1);
  ASSERT_EQ(f.monitor.Flush().size(), 1u);
}

TEST(SeatbeltMonitor, DistinctActionTargetOrRunAreDistinctEventsInOrder) {
  Fixture f;
  f.TwoRuns();
  f.monitor.Feed(Denial(101, "file-write-create", "/x"));
  f.monitor.Feed(Denial(101, "file-write-data", "/x"));
  f.monitor.Feed(Denial(101, "file-write-create", "/y"));
  f.monitor.Feed(Denial(201, "file-write-create", "/x"));
  f.monitor.Feed(Denial(101, "file-write-create", "/x"));
  f.now += absl::Seconds(2);
  const std::vector<RunViolation> out = f.monitor.Flush();
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].count, 2u);
  EXPECT_EQ(out[1].violation.action(), "file-write-data");
  EXPECT_EQ(out[2].violation.target(), "/y");
  EXPECT_EQ(out[3].run_id, "b");
}

TEST(SeatbeltMonitor, RememberedPidsKeepAnExitedProcessAttributed) {
  Fixture f;
  f.parents = {{101, 100}};
  f.monitor.AddRun("run", 100);
  f.monitor.Feed(Denial(101, "process-exec", "/tmp/p"));
  f.parents.erase(101);  // exited; its later lines are still being read
  f.monitor.Feed(Denial(101, "process-exec", "/tmp/q"));
  f.now += absl::Seconds(1);
  EXPECT_EQ(f.monitor.Flush().size(), 2u);
  EXPECT_EQ(f.monitor.unattributed(), 0u);
}

TEST(SeatbeltMonitor, RemoveRunReturnsItsOpenStormsAndForgetsIt) {
  Fixture f;
  f.TwoRuns();
  f.monitor.Feed(Denial(101, "network-outbound", "1.2.3.4:443"));
  f.monitor.Feed(Denial(201, "network-outbound", "1.2.3.4:443"));
  const std::vector<RunViolation> a = f.monitor.RemoveRun("a");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].run_id, "a");
  EXPECT_EQ(f.monitor.RunOf(101), std::nullopt);
  f.now += absl::Seconds(1);
  const std::vector<RunViolation> rest = f.monitor.Flush();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].run_id, "b");
}

TEST(SeatbeltMonitor, OpenStormsAreBounded) {
  Fixture f;
  f.parents = {{101, 100}};
  f.monitor.AddRun("run", 100);
  size_t early = 0;
  for (size_t i = 0; i < SeatbeltMonitor::kMaxOpenStorms + 5; ++i) {
    const std::vector<RunViolation> out =
        f.monitor.Feed(Denial(101, "file-read-data", absl::StrCat("/f", i)));
    early += out.size();
    if (!out.empty()) {
      EXPECT_EQ(out[0].violation.target(), absl::StrCat("/f", early - 1));
    }
  }
  EXPECT_EQ(early, 5u);
  f.now += absl::Seconds(1);
  EXPECT_EQ(f.monitor.Flush().size(), SeatbeltMonitor::kMaxOpenStorms);
}

}  // namespace
}  // namespace ccsandbox::policy
