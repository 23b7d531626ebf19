// Load against the real daemons: 64 sessions at once running short commands, then sequential
// one-shot runs, then Execs in one session. Every run succeeds, and afterwards neither daemon
// holds anything it did not hold before — processes, descriptors, mounts, cgroups, socket files,
// temp dirs. Latencies are printed (p50/p99), never asserted.
//
// E2E_LOAD_RUNS (default 1000) sets the sequential runs of each of the last two phases and
// E2E_LOAD_SESSIONS (default 64) the concurrent sessions (bazel test --test_env=E2E_LOAD_RUNS=100).
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"
#include "tests/leak_census.h"
#include "tests/review_sessions.h"

namespace ccsandbox::testing {
namespace {

int FromEnv(const char* name, int fallback) {
  const char* value = getenv(name);
  int n;
  return value != nullptr && absl::SimpleAtoi(value, &n) && n > 0 ? n : fallback;
}

// Latencies of one phase, printed as p50/p99.
class Latencies {
 public:
  void Add(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    ms_.push_back(absl::ToDoubleMilliseconds(d));
  }
  void Print(const std::string& phase) {
    absl::MutexLock lock(&mu_);
    if (ms_.empty()) return;
    std::sort(ms_.begin(), ms_.end());
    auto at = [&](double q) { return ms_[std::min(ms_.size() - 1, size_t(q * ms_.size()))]; };
    std::cerr << phase << ": " << ms_.size() << " runs, p50 " << at(0.5) << " ms, p99 " << at(0.99)
              << " ms, max " << ms_.back() << " ms\n";
  }

 private:
  absl::Mutex mu_;
  std::vector<double> ms_;
};

class LoadTest : public ReviewSessionsTest {
 protected:
  // Runs `echo <tag>` in `id` (then destroys the session when `one_shot`); a failure says why.
  ::testing::AssertionResult Run(const std::string& id, const std::string& tag, bool one_shot) {
    v1::ExecRequest request = ShExec(id, "echo " + tag);
    request.set_destroy_session_after(one_shot);
    grpc::Status status;
    std::vector<v1::SandboxEvent> events = ExecEvents(*stub_, request, &status, absl::Seconds(120));
    if (!status.ok()) return ::testing::AssertionFailure() << id << ": " << status.error_message();
    if (ExitOf(events) != 0 || StdoutOf(events) != tag + "\n") {
      return ::testing::AssertionFailure()
             << id << ": " << (Last(events) ? Last(events)->DebugString() : "no events");
    }
    return ::testing::AssertionSuccess();
  }
};

TEST_F(LoadTest, ManySessionsAndRunsSucceedAndLeaveNothingBehind) {
  const int sessions = FromEnv("E2E_LOAD_SESSIONS", 64);
  const int runs = FromEnv("E2E_LOAD_RUNS", 1000);
  constexpr int kExecsPerSession = 5;
  // One run first, so that what the daemons keep for good (gRPC's threads and descriptors, the
  // cgroup pool) is in the census taken before.
  ASSERT_TRUE(Launch("warm-up").ok());
  ASSERT_TRUE(Run("warm-up", "warm", /*one_shot=*/true));
  const LeakCensus before = LeakCensus::Take(*d_, {work_});

  Latencies concurrent, one_shot, warm;
  std::atomic<int> failures{0};
  {
    std::vector<std::thread> threads;
    for (int s = 0; s < sessions; ++s) {
      threads.emplace_back([&, s] {
        const std::string id = absl::StrCat("c", s);
        grpc::Status launched = Launch(id);
        EXPECT_TRUE(launched.ok()) << id << ": " << launched.error_message();
        if (!launched.ok()) return ++failures, void();
        for (int i = 0; i < kExecsPerSession; ++i) {
          const absl::Time start = absl::Now();
          const ::testing::AssertionResult ran = Run(id, absl::StrCat(id, "-", i), false);
          concurrent.Add(absl::Now() - start);
          EXPECT_TRUE(ran);
          if (!ran) ++failures;
        }
        EXPECT_TRUE(Destroy(id).ok()) << id;
      });
    }
    for (std::thread& t : threads) t.join();
  }
  concurrent.Print(absl::StrCat(sessions, " concurrent sessions, Exec"));
  ASSERT_EQ(failures, 0) << d_->BrokerLog().substr(0, 4000);

  for (int i = 0; i < runs; ++i) {
    const std::string id = absl::StrCat("o", i);
    const absl::Time start = absl::Now();
    grpc::Status launched = Launch(id);
    ASSERT_TRUE(launched.ok()) << id << ": " << launched.error_message();
    ASSERT_TRUE(Run(id, id, /*one_shot=*/true));
    one_shot.Add(absl::Now() - start);
  }
  one_shot.Print("sequential one-shot, Launch+Exec");

  ASSERT_TRUE(Launch("one").ok());
  for (int i = 0; i < runs; ++i) {
    const absl::Time start = absl::Now();
    ASSERT_TRUE(Run("one", absl::StrCat("e", i), /*one_shot=*/false));
    warm.Add(absl::Now() - start);
  }
  warm.Print("Execs in one session");
  ASSERT_TRUE(Destroy("one").ok());

  grpc::ClientContext ctx;
  v1::ListSessionsResponse list;
  ASSERT_TRUE(stub_->ListSessions(&ctx, v1::ListSessionsRequest(), &list).ok());
  EXPECT_EQ(list.sessions_size(), 0);
  EXPECT_TRUE(LeakCensus::SettlesTo(before, *d_, {work_}, absl::Seconds(60)));
  // The daemons' temp dirs: the broker's runtime dir (sessions' proxy sockets) is in the census;
  // the launcher stages binds below its socket directory, in each run's own mount namespace.
  const LeakCensus after = LeakCensus::Take(*d_, {work_});
  std::cerr << "after: launcher " << Total(after.launcher_fds) << " fds, broker "
            << Total(after.broker_fds) << " fds, " << after.files.size()
            << " files in the daemons' directories\n";
}

}  // namespace
}  // namespace ccsandbox::testing
