// Resource limits end to end, on this host's real cgroups (v1 controllers here): a fork bomb is
// stopped and named, memory past the limit is an OOM kill and says so, the host stays
// responsive, requests above the launcher's ceilings are refused naming the field, and a
// launcher without cgroups refuses explicit limits but runs the rest, saying so.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"
#include "tests/poll_until.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {
namespace {

class ResourcesTest : public ::testing::Test {
 protected:
  void Start(DaemonOptions options = {}) {
    auto daemons = Daemons::Start(options);
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    d_ = std::move(*daemons);
    stub_ = v1::SandboxBroker::NewStub(
        grpc::CreateChannel(d_->broker_address(), grpc::InsecureChannelCredentials()));
    work_ = d_->MakeWorkdir();
  }

  grpc::Status Launch(const std::string& id, const v1::SandboxResources* resources,
                      v1::SandboxHandle* handle = nullptr) {
    v1::LaunchRequest request;
    request.mutable_spec()->set_session_id(id);
    request.mutable_spec()->mutable_write_deny_patterns();
    v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
    bind->set_host_path(work_);
    bind->set_guest_path(work_);
    if (resources != nullptr) *request.mutable_spec()->mutable_resources() = *resources;
    grpc::ClientContext ctx;
    v1::SandboxHandle out;
    grpc::Status status = stub_->Launch(&ctx, request, &out);
    if (handle != nullptr) *handle = out;
    return status;
  }

  std::vector<v1::SandboxEvent> Exec(const std::string& session, const std::string& script,
                                     uint64_t timeout_ms = 60000) {
    return ExecEvents(*stub_, ShExec(session, script, timeout_ms));
  }

  // What Probe says; a Probe that fails is a failure, not a host without cgroups.
  bool LimitsEnforced() {
    grpc::ClientContext ctx;
    v1::ProbeResponse probe;
    const grpc::Status status = stub_->Probe(&ctx, v1::ProbeRequest(), &probe);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return status.ok() && probe.resource_limits_enforced();
  }

  std::unique_ptr<Daemons> d_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
  std::string work_;
};

TEST_F(ResourcesTest, AForkBombIsStoppedAndNamedWhileTheHostStaysResponsive) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  v1::SandboxResources limits;
  limits.set_pids_max(128);
  v1::SandboxHandle handle;
  ASSERT_TRUE(Launch("bomb", &limits, &handle).ok());
  EXPECT_TRUE(
      absl::StrContains(handle.details().fields().at("resourceLimits").string_value(), "pids 128"));
  ASSERT_TRUE(Launch("bystander", nullptr).ok());
  const auto began = std::chrono::steady_clock::now();
  // Every copy of the bomb is a shell with this command line.
  const std::string bomb_script = "f(){ f|f& }; f; sleep 30.5117";
  auto bomb = std::async(std::launch::async, [&] { return Exec("bomb", bomb_script, 60000); });
  // Meanwhile another session's command runs at once.
  const auto before = std::chrono::steady_clock::now();
  std::vector<v1::SandboxEvent> other = Exec("bystander", "true");
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(1));
  ASSERT_NE(Last(other), nullptr);
  EXPECT_TRUE(Last(other)->has_exit());
  std::vector<v1::SandboxEvent> events = bomb.get();
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(20));
  ASSERT_NE(Last(events), nullptr);
  ASSERT_TRUE(Last(events)->has_killed()) << Last(events)->DebugString();
  EXPECT_EQ(Last(events)->killed().reason(), "pids");
  EXPECT_GT(Last(events)->killed().usage().pids_max_hits(), 0u);
  // Nothing of the bomb is left.
  EXPECT_TRUE(WaitNoProcessMatches(bomb_script, 2));
}

// The cgroup is the boundary the limits and the kill rest on: a command cannot leave its Exec's
// cgroup — not through a cgroup file system (none inside; mounting one is refused), not through
// the cgroup.procs descriptors its reaper was given (closed before the command starts, and
// another process's fds are out of reach), not by starting over in a new session.
TEST_F(ResourcesTest, ACommandCannotLeaveItsCgroup) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  ASSERT_TRUE(Launch("stay", nullptr).ok());
  const std::string marker = "sleep 1000.7717";
  auto held = std::async(std::launch::async, [&] {
    return Exec("stay",
                "echo 0 > /sys/fs/cgroup/pids/cgroup.procs; "
                "mkdir -p /tmp/cg && mount -t cgroup -o pids none /tmp/cg; "
                "for f in /proc/[0-9]*/fd/*; do "
                "  case $(readlink $f) in *cgroup*) echo 0 > $f && echo escaped $f;; esac; "
                "done 2>/dev/null; "
                "setsid " +
                    marker + " & wait");
  });
  ASSERT_TRUE(WaitForProcessMatching(marker, 10));
  pid_t pid = 0;
  if (DIR* proc = opendir("/proc")) {
    while (dirent* e = readdir(proc)) {
      const std::string cmdline = ReadFile(absl::StrCat("/proc/", e->d_name, "/cmdline"));
      if (absl::StrContains(cmdline, "1000.7717")) pid = atoi(e->d_name);
    }
    closedir(proc);
  }
  ASSERT_GT(pid, 0);
  const std::string cgroups = ReadFile(absl::StrCat("/proc/", pid, "/cgroup"));
  EXPECT_TRUE(absl::StrContains(cgroups, "/ccsandbox-")) << cgroups;
  EXPECT_TRUE(absl::StrContains(cgroups, "/e-")) << "not in its Exec's cgroup: " << cgroups;
  grpc::ClientContext ctx;
  v1::KillRequest kill;
  kill.set_session_id("stay");
  v1::KillResponse killed;
  ASSERT_TRUE(stub_->Kill(&ctx, kill, &killed).ok());
  std::vector<v1::SandboxEvent> events = held.get();
  EXPECT_FALSE(absl::StrContains(StdoutOf(events), "escaped")) << StdoutOf(events);
  EXPECT_TRUE(WaitNoProcessMatches(marker, 5));
}

TEST_F(ResourcesTest, MemoryPastTheLimitIsAnOomKill) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  v1::SandboxResources limits;
  limits.set_memory_max_bytes(64 << 20);
  ASSERT_TRUE(Launch("oom", &limits).ok());
  std::vector<v1::SandboxEvent> events =
      Exec("oom", "python3 -c 'x = bytearray(512 * 1024 * 1024); print(len(x))'");
  ASSERT_NE(Last(events), nullptr);
  ASSERT_TRUE(Last(events)->has_killed()) << Last(events)->DebugString();
  EXPECT_EQ(Last(events)->killed().reason(), "oom");
  EXPECT_GE(Last(events)->killed().usage().oom_kills(), 1u);
  // The session goes on: the limit ended the command, not the sandbox.
  std::vector<v1::SandboxEvent> next = Exec("oom", "echo fine");
  ASSERT_NE(Last(next), nullptr);
  ASSERT_TRUE(Last(next)->has_exit());
  EXPECT_EQ(Last(next)->exit().exit_code(), 0);
  EXPECT_GT(Last(next)->exit().usage().cpu_usage_us(), 0u);
}

TEST_F(ResourcesTest, RequestsAboveTheLaunchersCeilingsAreRefusedNamingTheField) {
  Start({.launcher_flags = {"--max-pids=200", "--max-memory-bytes=1073741824"}});
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  v1::SandboxResources pids;
  pids.set_pids_max(1000);
  grpc::Status refused = Launch("too-many", &pids);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(refused.error_message(), "resources.pidsMax"))
      << refused.error_message();
  v1::SandboxResources memory;
  memory.set_memory_max_bytes(uint64_t{2} << 30);
  refused = Launch("too-big", &memory);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(refused.error_message(), "resources.memoryMaxBytes"))
      << refused.error_message();
  // Within them, and the defaults (bounded by the ceilings), it runs.
  v1::SandboxHandle handle;
  ASSERT_TRUE(Launch("fits", nullptr, &handle).ok());
  EXPECT_TRUE(absl::StrContains(handle.details().fields().at("resourceLimits").string_value(),
                                "pids 200, memory 1 GiB"));
}

// A launcher without usable cgroups: turned off, or pointed at a cgroup root that has none (an
// empty directory: a host without the controllers, as the launcher sees it).
class NoCgroupsTest : public ResourcesTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(NoCgroupsTest, ALauncherWithoutCgroupsRefusesExplicitLimitsAndSaysSo) {
  std::string flag = GetParam();
  std::string empty;
  if (flag == "--cgroup-fs") {
    char dir[] = "/tmp/ccsandbox-no-cgroups.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    empty = dir;
    flag = absl::StrCat("--cgroup-fs=", empty);
  }
  Start({.launcher_flags = {flag}});
  EXPECT_FALSE(LimitsEnforced());
  v1::SandboxResources limits;
  limits.set_pids_max(100);
  grpc::Status refused = Launch("asked", &limits);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(refused.error_message(), "cannot enforce resource limits"))
      << refused.error_message();
  v1::SandboxHandle handle;
  ASSERT_TRUE(Launch("unasked", nullptr, &handle).ok());
  EXPECT_TRUE(absl::StartsWith(handle.details().fields().at("resourceLimits").string_value(),
                               "no resource limits"));
  ProgramResult probe = d_->Sandboxctl({"probe"});
  EXPECT_TRUE(absl::StrContains(probe.out, "resource limits: NOT enforced")) << probe.out;
  // Nothing to freeze with: Suspend says so, and is never pretended.
  grpc::ClientContext ctx;
  v1::SessionRequest request;
  request.set_session_id("unasked");
  grpc::Status suspended = stub_->Suspend(&ctx, request, &handle);
  EXPECT_EQ(suspended.error_code(), grpc::StatusCode::UNIMPLEMENTED) << suspended.error_message();
  if (!empty.empty()) {
    EXPECT_TRUE(absl::StrContains(probe.out, "below " + empty)) << probe.out;
    rmdir(empty.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Launchers, NoCgroupsTest,
                         ::testing::Values("--cgroups=off", "--cgroup-fs"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "--cgroups=off" ? "TurnedOff" : "EmptyCgroupRoot";
                         });

TEST_F(ResourcesTest, SuspendStopsTheSessionAndResumeGoesOn) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  ASSERT_TRUE(Launch("nap", nullptr).ok());
  // A command that prints every 50 ms, and appends to a file on the host as well (whose size is
  // exact the moment the sandbox is frozen: no write is in flight); this thread notes when each
  // line arrives.
  const std::string ticks = work_ + "/ticks";
  auto ticks_size = [&] {
    struct stat st {};
    return stat(ticks.c_str(), &st) == 0 ? st.st_size : -1;
  };
  absl::Mutex mu;
  std::vector<std::chrono::steady_clock::time_point> arrivals;
  grpc::ClientContext exec_ctx;
  v1::ExecRequest request;
  request.set_session_id("nap");
  for (const std::string& a :
       {std::string("sh"), std::string("-c"),
        absl::StrCat("while :; do echo tick; echo tick >> ", ticks, "; sleep 0.05; done")}) {
    request.add_argv(a);
  }
  auto reader = stub_->Exec(&exec_ctx, request);
  std::thread reading([&] {
    v1::SandboxEvent event;
    while (reader->Read(&event)) {
      if (!event.stdout().empty()) {
        absl::MutexLock lock(&mu);
        arrivals.push_back(std::chrono::steady_clock::now());
      }
    }
  });
  auto count = [&] {
    absl::MutexLock lock(&mu);
    return arrivals.size();
  };
  auto session = [&](bool suspend) {
    grpc::ClientContext ctx;
    v1::SessionRequest r;
    r.set_session_id("nap");
    v1::SandboxHandle handle;
    grpc::Status status =
        suspend ? stub_->Suspend(&ctx, r, &handle) : stub_->Resume(&ctx, r, &handle);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return handle.state();
  };
  ASSERT_TRUE(PollUntil([&] { return count() >= 3; }, absl::Seconds(30), "three ticks"));
  // Suspend returns once every process of the session has stopped.
  EXPECT_EQ(session(true), v1::SANDBOX_STATE_SUSPENDED);
  const off_t written_at = ticks_size();
  ASSERT_GT(written_at, 0);
  // The negative check: nothing written for 2 s, and no stdout in the second of them (the
  // first lets lines already in the pipes and the two streams arrive).
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const size_t frozen_at = count();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(ticks_size(), written_at) << "the command ran while suspended";
  EXPECT_EQ(count(), frozen_at) << "output while suspended";
  // No Exec meanwhile.
  std::vector<v1::SandboxEvent> refused;
  {
    grpc::ClientContext ctx;
    v1::ExecRequest other;
    other.set_session_id("nap");
    other.add_argv("true");
    auto r = stub_->Exec(&ctx, other);
    v1::SandboxEvent event;
    while (r->Read(&event)) refused.push_back(event);
    grpc::Status status = r->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  }
  EXPECT_EQ(session(false), v1::SANDBOX_STATE_ACTIVE);
  EXPECT_TRUE(PollUntil([&] { return count() > frozen_at && ticks_size() > written_at; },
                        absl::Seconds(5), "output once resumed"));
  grpc::ClientContext kill_ctx;
  v1::KillRequest kill;
  kill.set_session_id("nap");
  v1::KillResponse killed;
  EXPECT_TRUE(stub_->Kill(&kill_ctx, kill, &killed).ok());
  reading.join();
  reader->Finish();
}

// A frozen process would not die of SIGKILL (v1): Destroy thaws what it kills.
TEST_F(ResourcesTest, ASuspendedSessionIsDestroyedWithNothingLeft) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  ASSERT_TRUE(Launch("frozen", nullptr).ok());
  const std::string marker = "sleep 1000.6131";
  auto held = std::async(std::launch::async, [&] { return Exec("frozen", "exec " + marker); });
  ASSERT_TRUE(WaitForProcessMatching(marker, 10));
  grpc::ClientContext suspend_ctx;
  v1::SessionRequest request;
  request.set_session_id("frozen");
  v1::SandboxHandle handle;
  ASSERT_TRUE(stub_->Suspend(&suspend_ctx, request, &handle).ok());
  grpc::ClientContext destroy_ctx;
  const auto before = std::chrono::steady_clock::now();
  ASSERT_TRUE(stub_->Destroy(&destroy_ctx, request, &handle).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(5));
  EXPECT_FALSE(AnyProcessMatches(marker));
  std::vector<v1::SandboxEvent> events = held.get();
  ASSERT_NE(Last(events), nullptr);
  EXPECT_TRUE(Last(events)->has_killed()) << Last(events)->DebugString();
}

// Destroy kills everything in the session's cgroups before it returns; their directories go
// in the background (each costs milliseconds on v1), leaving only the one made ahead for the
// next Launch.
TEST_F(ResourcesTest, NoProcessOrCgroupIsLeftAfterDestroy) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  // This launcher's directory in the pids hierarchy (named after its socket).
  const std::string mine =
      absl::StrFormat("/sys/fs/cgroup/pids/ccsandbox-%012x",
                      std::hash<std::string>()(d_->launcher_socket()) & 0xffffffffffffULL);
  auto leaves = [&] {
    std::vector<std::string> found;
    if (DIR* dir = opendir(mine.c_str())) {
      while (dirent* e = readdir(dir)) {
        if (e->d_type == DT_DIR && e->d_name[0] != '.') found.push_back(mine + "/" + e->d_name);
      }
      closedir(dir);
    }
    return found;
  };
  auto processes = [&] {
    int count = 0;
    std::vector<std::string> dirs = leaves();
    for (size_t i = 0; i < dirs.size(); ++i) {
      count += CountOf(ReadFile(dirs[i] + "/cgroup.procs"), "\n");
      if (DIR* dir = opendir(dirs[i].c_str())) {
        while (dirent* e = readdir(dir)) {
          if (e->d_type == DT_DIR && e->d_name[0] != '.') dirs.push_back(dirs[i] + "/" + e->d_name);
        }
        closedir(dir);
      }
    }
    return count;
  };
  ASSERT_TRUE(Launch("gone", nullptr).ok());
  Exec("gone", "setsid sleep 100 </dev/null >/dev/null 2>&1 & echo started");
  EXPECT_GT(processes(), 0);
  grpc::ClientContext ctx;
  v1::SessionRequest request;
  request.set_session_id("gone");
  v1::SandboxHandle handle;
  ASSERT_TRUE(stub_->Destroy(&ctx, request, &handle).ok());
  EXPECT_EQ(processes(), 0) << "a process outlived its session";
  EXPECT_TRUE(PollUntil([&] { return leaves().size() <= 1; }, absl::Seconds(10),
                        "the session's cgroups to be removed"));
}

// An orderly stop of the launcher kills what its sandboxes left and removes its cgroups: its
// own directory in every hierarchy goes too (each launcher, named after its socket, has one).
TEST_F(ResourcesTest, AnOrderlyStopOfTheLauncherLeavesNoCgroup) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  ASSERT_TRUE(Launch("left", nullptr).ok());
  Exec("left", "setsid sleep 100.4242 </dev/null >/dev/null 2>&1 & echo started");
  std::vector<std::string> dirs;
  for (const std::string& dir : LauncherCgroupDirs(d_->launcher_socket(), d_->launcher_pid())) {
    if (PathExists(dir)) dirs.push_back(dir);
  }
  ASSERT_FALSE(dirs.empty()) << "no cgroup directory of the launcher found";
  const int status = d_->StopLauncher();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_FALSE(AnyProcessMatches("sleep 100.4242"));
  for (const std::string& dir : dirs) EXPECT_FALSE(PathExists(dir)) << dir << " is left";
}

// Every Exec's exit says how many processes it had at most, and the session's handle carries
// the session's counters so far.
TEST_F(ResourcesTest, UsageCountsProcessesAndTheHandleCarriesTheSessionsCounters) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  ASSERT_TRUE(Launch("count", nullptr).ok());
  std::vector<v1::SandboxEvent> events =
      Exec("count", "sleep 0.5 & sleep 0.5 & sleep 0.5 & sleep 0.5 & wait; echo done");
  ASSERT_NE(Last(events), nullptr);
  ASSERT_TRUE(Last(events)->has_exit()) << Last(events)->DebugString();
  const v1::SandboxUsage& usage = Last(events)->exit().usage();
  EXPECT_GE(usage.pids_peak(), 5u) << "sh and four sleeps: " << usage.DebugString();
  // A run shorter than one 50 ms wake-up still counts what it ran.
  std::vector<v1::SandboxEvent> quick = Exec("count", "exec true");
  ASSERT_NE(Last(quick), nullptr);
  ASSERT_TRUE(Last(quick)->has_exit()) << Last(quick)->DebugString();
  EXPECT_GE(Last(quick)->exit().usage().pids_peak(), 1u) << Last(quick)->DebugString();
  EXPECT_LT(usage.pids_peak(), 64u) << usage.DebugString();
  EXPECT_GT(usage.cpu_usage_us(), 0u);
  EXPECT_GT(usage.memory_peak_bytes(), 0u);
  // Sent after the Exec's end: it reaches the handle shortly after, typed (what programs read)
  // and repeated as a note in details.
  auto session = [&] {
    grpc::ClientContext ctx;
    v1::SessionRequest request;
    request.set_session_id("count");
    v1::SandboxHandle handle;
    EXPECT_TRUE(stub_->GetSession(&ctx, request, &handle).ok());
    return handle;
  };
  ASSERT_TRUE(PollUntil([&] { return session().usage().pids_peak() > 0; }, absl::Seconds(10),
                        "the handle's usage"));
  const v1::SandboxHandle handle = session();
  EXPECT_GE(handle.usage().pids_peak(), 5u) << handle.DebugString();
  EXPECT_GT(handle.usage().cpu_usage_us(), 0u) << handle.DebugString();
  EXPECT_GT(handle.usage().memory_peak_bytes(), 0u) << handle.DebugString();
  EXPECT_EQ(handle.usage().oom_kills(), 0u) << handle.DebugString();
  const google::protobuf::Struct counters = handle.details().fields().at("usage").struct_value();
  EXPECT_EQ(counters.fields().at("pidsPeak").number_value(),
            static_cast<double>(handle.usage().pids_peak()))
      << counters.DebugString();
}

}  // namespace
}  // namespace ccsandbox::testing
