// Resource limits under attack, end to end on this host's real cgroups: what a sandboxed
// command (or a client racing its own requests) tried in order to use more than its session's
// limits, to outlive its session, to make its kill reason lie, or to make the launcher hang —
// each a way that once worked, pinned here so that it stays closed.
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/launcher.grpc.pb.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/exec_events.h"
#include "tests/poll_until.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {
namespace {

class ResourcesAttackTest : public ::testing::Test {
 protected:
  void Start(DaemonOptions options = {}) {
    auto daemons = Daemons::Start(options);
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    d_ = std::move(*daemons);
    stub_ = v1::SandboxBroker::NewStub(
        grpc::CreateChannel(d_->broker_address(), grpc::InsecureChannelCredentials()));
    work_ = d_->MakeWorkdir();
    freezer_dirs_.clear();
    for (const std::string& dir : LauncherCgroupDirs(d_->launcher_socket(), d_->launcher_pid())) {
      if (absl::StrContains(dir, "/freezer/")) freezer_dirs_.push_back(dir);
    }
  }

  // Whatever a failed test left frozen is thawed, so that it dies with its launcher instead of
  // staying on the host.
  void TearDown() override {
    for (const std::string& root : freezer_dirs_) ThawBelow(root);
  }

  static void ThawBelow(const std::string& dir) {
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        if (e->d_type == DT_DIR && e->d_name[0] != '.') ThawBelow(dir + "/" + e->d_name);
      }
      closedir(d);
    }
    if (FILE* state = fopen((dir + "/freezer.state").c_str(), "w")) {
      fputs("THAWED", state);
      fclose(state);
    }
  }

  bool LimitsEnforced() {
    grpc::ClientContext ctx;
    v1::ProbeResponse probe;
    const grpc::Status status = stub_->Probe(&ctx, v1::ProbeRequest(), &probe);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return status.ok() && probe.resource_limits_enforced();
  }

  grpc::Status Launch(const std::string& id, const v1::SandboxResources* resources) {
    v1::LaunchRequest request;
    request.mutable_spec()->set_session_id(id);
    request.mutable_spec()->mutable_write_deny_patterns();
    v1::SandboxBindMount* bind = request.mutable_spec()->add_bind_mounts();
    bind->set_host_path(work_);
    bind->set_guest_path(work_);
    request.mutable_spec()->set_guest_workdir(work_);
    if (resources != nullptr) *request.mutable_spec()->mutable_resources() = *resources;
    grpc::ClientContext ctx;
    v1::SandboxHandle handle;
    return stub_->Launch(&ctx, request, &handle);
  }

  std::vector<v1::SandboxEvent> Exec(const std::string& session, const std::string& script) {
    return ExecEvents(*stub_, ShExec(session, script, 60000), nullptr, absl::Seconds(90));
  }

  grpc::Status Destroy(const std::string& session) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::SessionRequest request;
    request.set_session_id(session);
    v1::SandboxHandle handle;
    return stub_->Destroy(&ctx, request, &handle);
  }

  // The launcher's name for the session's sandbox, from the broker's log line
  // "session ID: sandbox SANDBOX warm (...)".
  std::string SandboxIdOf(const std::string& session) {
    const std::string log = d_->BrokerLog();
    const std::string key = absl::StrCat("session ", session, ": sandbox ");
    const size_t at = log.find(key);
    if (at == std::string::npos) return "";
    const size_t begin = at + key.size();
    return log.substr(begin, log.find(' ', begin) - begin);
  }

  std::unique_ptr<Daemons> d_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
  std::string work_;
  std::vector<std::string> freezer_dirs_;
};

// A Freeze that lands after the end of a session has killed its processes (a client suspending
// while another destroys it, or while the sandbox ends on its own) froze them again with the
// kill pending: a frozen process does not die, so they stayed on the host for good, Destroy
// timed out, the launcher waited on its bwrap forever and its orderly stop hung. A sandbox
// that is ending is never frozen again.
TEST_F(ResourcesAttackTest, AFreezeRacingTheSessionsEndCannotKeepItAlive) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  ASSERT_TRUE(Launch("race", nullptr).ok());
  // Processes with memory to give back take a while to exit once killed: the window in which
  // a freeze catches them.
  const std::string marker = "1000.5151";
  constexpr int kProcesses = 60;
  auto held = std::async(std::launch::async, [&] {
    return Exec("race", absl::StrCat("for i in $(seq ", kProcesses,
                                     "); do python3 -c \"import pathlib, time; x = bytearray(8 << "
                                     "20); pathlib.Path(\\\"ready.$i\\\").touch(); time.sleep(",
                                     marker, ")\" & done; wait"));
  });
  auto ready = [&] {
    int count = 0;
    for (int i = 1; i <= kProcesses; ++i) count += PathExists(absl::StrCat(work_, "/ready.", i));
    return count == kProcesses;
  };
  ASSERT_TRUE(PollUntil(ready, absl::Seconds(60), "every process to hold its memory"));
  const std::string sandbox = SandboxIdOf("race");
  ASSERT_FALSE(sandbox.empty()) << d_->BrokerLog();
  // A client that keeps suspending the session while another destroys it.
  auto launcher = v1::SandboxLauncher::NewStub(
      grpc::CreateChannel("unix:" + d_->launcher_socket(), grpc::InsecureChannelCredentials()));
  std::atomic<bool> stop{false};
  std::atomic<int> frozen{0};
  auto freeze = [&] {
    while (!stop) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::FreezeRequest request;
      request.set_sandbox_id(sandbox);
      request.set_frozen(true);
      v1::FreezeResponse response;
      if (launcher->Freeze(&ctx, request, &response).ok()) ++frozen;
    }
  };
  std::thread freezers[] = {std::thread(freeze), std::thread(freeze)};
  ASSERT_TRUE(PollUntil([&] { return frozen > 0; }, absl::Seconds(10), "a first freeze"));
  const grpc::Status destroyed = Destroy("race");
  stop = true;
  for (std::thread& freezer : freezers) freezer.join();
  EXPECT_TRUE(destroyed.ok()) << destroyed.error_message();
  EXPECT_TRUE(WaitNoProcessMatches(marker, 10)) << "the destroyed session's processes stayed";
  if (AnyProcessMatches(marker)) {
    for (const std::string& root : freezer_dirs_) ThawBelow(root);  // else they stay for good
  }
  std::vector<v1::SandboxEvent> events = held.get();
  ASSERT_NE(Last(events), nullptr);
  EXPECT_TRUE(Last(events)->has_killed()) << Last(events)->DebugString();
  // The launcher waits on nothing: it stops in order (else the fixture's SIGKILL).
  const int status = d_->StopLauncher();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

// A launcher started on the socket of one that runs (twice by mistake, or a restart that
// overlaps) killed every sandbox of the running one — it cleared "what a previous launcher left"
// in their shared cgroup directory — and only then found the socket taken.
TEST_F(ResourcesAttackTest, ASecondLauncherOnALiveSocketLeavesTheFirstsSandboxesAlone) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  ASSERT_TRUE(Launch("live", nullptr).ok());
  const std::string marker = "sleep 1000.4343";
  auto held = std::async(std::launch::async, [&] { return Exec("live", "exec " + marker); });
  ASSERT_TRUE(WaitForProcessMatching(marker, 20));
  ProgramResult second = RunProgram({Runfile("launcher/sandbox_launcherd"),
                                     "--socket=" + d_->launcher_socket(), "--allowed-uids=0"});
  EXPECT_NE(second.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(second.out + second.err, "already listens"))
      << second.out << second.err;
  EXPECT_TRUE(AnyProcessMatches(marker)) << "the second launcher killed the first one's run";
  EXPECT_EQ(StdoutOf(Exec("live", "echo alive")), "alive\n");
  grpc::ClientContext ctx;
  v1::KillRequest kill;
  kill.set_session_id("live");
  v1::KillResponse killed;
  EXPECT_TRUE(stub_->Kill(&ctx, kill, &killed).ok());
  held.get();
}

// A launcher that fails to start after it made its cgroup directories (a bad --socket-group)
// left them behind: hundreds accumulate on a host that runs the tests.
TEST_F(ResourcesAttackTest, ALauncherThatCannotStartLeavesNoCgroup) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  const std::string socket = d_->dir() + "/refused.sock";
  ProgramResult refused =
      RunProgram({Runfile("launcher/sandbox_launcherd"), "--socket=" + socket, "--allowed-uids=0",
                  "--socket-group=no-such-group-ccsandbox"});
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  const std::vector<std::string> dirs = LauncherCgroupDirs(socket, getpid());
  ASSERT_FALSE(dirs.empty());
  for (const std::string& dir : dirs) EXPECT_FALSE(PathExists(dir)) << dir << " is left";
}

// On cgroup v1 socket buffers are not part of memory.limit_in_bytes: a session of 64 MiB held
// hundreds of MiB in loopback TCP and UDP buffers of its own network namespace — host memory no
// limit counted, and the host's TCP stack pushed towards memory pressure. Its sockets' buffers
// are limited too, to the memory limit.
TEST_F(ResourcesAttackTest, SocketBuffersCountAgainstTheMemoryLimit) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  v1::SandboxResources limits;
  limits.set_memory_max_bytes(64 << 20);
  ASSERT_TRUE(Launch("sockets", &limits).ok());
  // Queues up to 512 MiB on connections nobody reads and on UDP sockets nobody reads, and says
  // how much the kernel took (TCP: what send accepted; UDP: the receive queues, /proc/net/udp).
  const std::string script = R"PY(
import socket
cap = 512 << 20
tcp = 0
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1024)
held = []
for i in range(1000):
    c = socket.create_connection(srv.getsockname())
    s, _ = srv.accept()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 20)
    c.setblocking(False)
    held += [c, s]
    try:
        while tcp < cap:
            tcp += c.send(b"x" * 65536)
    except (BlockingIOError, OSError):
        pass
    if tcp >= cap:
        break
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(80):
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    rx.bind(("127.0.0.1", 0))
    held.append(rx)
    for k in range(160):
        try:
            tx.sendto(b"x" * 60000, rx.getsockname())
        except OSError:
            pass
udp = 0
for line in open("/proc/net/udp").read().splitlines()[1:]:
    udp += int(line.split()[4].split(":")[1], 16)
print("tcp", tcp >> 20, "udp", udp >> 20, flush=True)
)PY";
  std::vector<v1::SandboxEvent> events = Exec("sockets", "python3 -c '" + script + "'");
  const std::string out = StdoutOf(events);
  std::vector<std::string> words = absl::StrSplit(out, absl::ByAnyChar(" \n"), absl::SkipEmpty());
  uint64_t tcp_mib = 0, udp_mib = 0;
  if (words.size() == 4) {
    ASSERT_TRUE(absl::SimpleAtoi(words[1], &tcp_mib));
    ASSERT_TRUE(absl::SimpleAtoi(words[3], &udp_mib));
  } else {
    // Killed at the limit before it could say: that is a limit too.
    ASSERT_NE(Last(events), nullptr);
    ASSERT_TRUE(Last(events)->has_killed()) << out << Last(events)->DebugString();
  }
  EXPECT_LE(tcp_mib + udp_mib, 128u) << "socket buffers past a 64 MiB session's limit: " << out;
}

// Memory that no process holds — pipe or socket buffers, a file in the sandbox's /tmp (a
// tmpfs) — made the OOM killer choose the sandbox's own init, the largest process there when
// the command's are small: the whole session died, reported as killed{sandbox-ended}. The
// command's processes are the ones the OOM killer takes, its Exec ends killed (oom, or its
// timeout when only the shell's children were taken), and the session goes on.
TEST_F(ResourcesAttackTest, MemoryHeldByNoProcessEndsTheCommandNotTheSandbox) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  v1::SandboxResources limits;
  limits.set_memory_max_bytes(64 << 20);
  ASSERT_TRUE(Launch("pipes", &limits).ok());
  // Small processes, each holding a full pipe nobody reads.
  const std::string marker = "sleep 1000.2727";
  std::vector<v1::SandboxEvent> events = Exec(
      "pipes", "for i in $(seq 1500); do head -c 65536 /dev/zero | " + marker + " & done; wait");
  ASSERT_NE(Last(events), nullptr);
  ASSERT_TRUE(Last(events)->has_killed()) << Last(events)->DebugString();
  // The OOM killer takes the command's processes (oom_score_adj 1000), never the init. Which of
  // them it takes first is the kernel's choice: the shell (the run ends killed{oom}) or only its
  // small children, the shell then spawning on until the run's timeout (seen under load). Either
  // way the kills are the run's and the session lives on.
  const v1::SandboxEvent::Killed& killed = Last(events)->killed();
  EXPECT_TRUE(killed.reason() == "oom" ||
              (killed.reason() == "timeout" && killed.usage().oom_kills() > 0))
      << Last(events)->DebugString();
  EXPECT_NE(killed.reason(), "sandbox-ended") << Last(events)->DebugString();
  EXPECT_TRUE(WaitNoProcessMatches(marker, 5));
  std::vector<v1::SandboxEvent> next = Exec("pipes", "echo fine");
  EXPECT_EQ(StdoutOf(next), "fine\n") << (Last(next) ? Last(next)->DebugString() : "no events");
  // The same for a file in /tmp: what it holds stays, but the kill is the command's, and said.
#ifndef __SANITIZE_ADDRESS__
  // Not with an ASan shim (--config=asan-ubsan; the normal build's e2e run checks it): the
  // sandbox's init is then a shim of ~20 MiB resident whose allocations after the command's kill
  // need pages the file still holds, so the OOM killer's next victim is the init itself
  // (killed{sandbox-ended}); the static shim of a real build allocates nothing new there.
  ASSERT_TRUE(Launch("tmpfs", &limits).ok());
  events = Exec("tmpfs", "exec head -c 100M /dev/zero > /tmp/fill");
  ASSERT_NE(Last(events), nullptr);
  ASSERT_TRUE(Last(events)->has_killed()) << Last(events)->DebugString();
  EXPECT_EQ(Last(events)->killed().reason(), "oom") << Last(events)->DebugString();
#endif
}

// A CPU quota below the kernel's minimum (1 ms per 100 ms period) reached the cgroup file and
// came back as the kernel's error on a host path; it is the request that is wrong.
TEST_F(ResourcesAttackTest, ACpuQuotaBelowTheKernelsMinimumIsRefusedNamingTheField) {
  Start();
  if (!LimitsEnforced()) CCSANDBOX_SKIP_OR_FAIL_IN_CI("no usable cgroups on this host");
  v1::SandboxResources limits;
  limits.set_cpu_millicores(5);
  const grpc::Status refused = Launch("tiny-quota", &limits);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << refused.error_message();
  EXPECT_TRUE(absl::StrContains(refused.error_message(), "resources.cpuMillicores"))
      << refused.error_message();
  EXPECT_FALSE(absl::StrContains(refused.error_message(), "/sys/fs/cgroup"))
      << refused.error_message();
}

}  // namespace
}  // namespace ccsandbox::testing
