// The QEMU microVM runtime against real qemu (under tcg: these hosts' KVM cannot run the guest,
// docs/microvm.md) and the session image scripts/install-deps.sh builds: one VM serves the
// Exec tests, Stop must leave no qemu and no file; a second one panics. Prints its figures.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "broker/microvm/egress_test_support.h"
#include "broker/microvm/qemu_runtime.h"
#include "broker/runtime_dir.h"
#include "broker/session_egress.h"
#include "broker/session_events.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/sandbox.pb.h"
#include "proxy/event_loop.h"
#include "proxy/static_resolver.h"
#include "tests/daemon_fixture.h"
#include "tests/microvm_test_config.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {
namespace {

using broker::microvm::Guest;
using broker::microvm::GuestCommand;
using broker::microvm::QemuRuntime;
using broker::microvm::QemuRuntimeConfig;

struct GuestRun {
  std::vector<v1::SandboxEvent> events;
  std::string out, err;
  std::optional<int> exit_code;
  std::string killed;
  int hypervisor_pid = 0;
};

GuestRun Exec(Guest& guest, GuestCommand command) {
  GuestRun run;
  const absl::Status status = guest.Exec(command, [&](const v1::SandboxEvent& event) {
    run.events.push_back(event);
    if (event.has_ready()) run.hypervisor_pid = event.ready().pid();
    if (event.has_stdout()) run.out += event.stdout();
    if (event.has_stderr()) run.err += event.stderr();
    if (event.has_exit()) run.exit_code = event.exit().exit_code();
    if (event.has_killed()) run.killed = event.killed().reason();
    return true;
  });
  EXPECT_TRUE(status.ok()) << status;
  for (const v1::SandboxEvent& event : run.events) {
    EXPECT_EQ(event.backend(), v1::SANDBOX_BACKEND_MICROVM) << event.DebugString();
  }
  return run;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename());
  }
  return names;
}

long RssKib(int pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "VmRSS:")) return std::stol(line.substr(6));
  }
  return -1;
}

class QemuRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char root[] = "/tmp/ccsandbox-qrt-XXXXXX";
    ASSERT_NE(mkdtemp(root), nullptr);
    config_ = MicrovmTestConfig(root);
    if (const std::string missing = MissingMicrovmImage(config_); !missing.empty()) {
      CCSANDBOX_SKIP_OR_FAIL_IN_CI(missing);
    }
  }
  void TearDown() override {
    if (!config_.state_root.empty()) std::filesystem::remove_all(config_.state_root);
  }
  QemuRuntimeConfig config_;
};

TEST_F(QemuRuntimeTest, OneGuestRunsCommandsAndStopLeavesNothing) {
  QemuRuntime runtime(config_);
  const absl::Time boot = absl::Now();
  absl::StatusOr<std::unique_ptr<Guest>> started = runtime.Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  std::cout << "microVM cold boot to warm (tcg): " << absl::Now() - boot << std::endl;
  Guest& guest = **started;
  std::string cause;
  EXPECT_EQ(guest.State(&cause), v1::SANDBOX_STATE_WARM) << cause;

  GuestRun hi = Exec(guest, {.argv = {"echo", "hi"}});
  EXPECT_EQ(hi.out, "hi\n");
  EXPECT_EQ(hi.exit_code, 0);
  ASSERT_GE(hi.events.size(), 4u);
  EXPECT_TRUE(hi.events.front().has_starting());
  EXPECT_TRUE(hi.events[1].has_ready());
  EXPECT_TRUE(hi.events.back().has_exit());
  ASSERT_GT(hi.hypervisor_pid, 0);
  std::cout << "qemu RSS, warm guest: " << RssKib(hi.hypervisor_pid) / 1024 << " MiB" << std::endl;

  GuestRun three = Exec(guest, {.argv = {"sh", "-c", "echo oops >&2; exit 3"}});
  EXPECT_EQ(three.exit_code, 3);
  EXPECT_EQ(three.err, "oops\n");

  // More than one stdin frame and more than a pipe's buffer each way.
  std::string input;
  for (int i = 0; input.size() < 300 * 1024; ++i) absl::StrAppend(&input, "line ", i, "\n");
  GuestRun cat = Exec(guest, {.argv = {"cat"}, .stdin_data = input});
  EXPECT_EQ(cat.exit_code, 0);
  EXPECT_TRUE(cat.out == input) << cat.out.size() << " bytes back of " << input.size();

  GuestRun env = Exec(guest, {.argv = {"sh", "-c", "echo \"$GREETING\"; pwd"},
                              .env = {{"GREETING", "hello there"}, {"PATH", "/bin"}},
                              .workdir = "/proc"});
  EXPECT_EQ(env.out, "hello there\n/proc\n");

  GuestRun missing = Exec(guest, {.argv = {"no-such-command"}});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_THAT(missing.err, ::testing::HasSubstr("no-such-command"));

  GuestRun slow = Exec(guest, {.argv = {"sleep", "30"}, .timeout = absl::Milliseconds(300)});
  EXPECT_EQ(slow.killed, "timeout");
  EXPECT_FALSE(slow.exit_code.has_value());

  // No survivor: the run ends when its main process does, though background jobs (one in its
  // own session) hold its stdout open; the rest of the guest is killed and reaped before the
  // exit goes out, as a native run's reaper does.
  const absl::Time bg_start = absl::Now();
  GuestRun background =
      Exec(guest, {.argv = {"sh", "-c", "sleep 1000 & setsid sleep 1001 & echo started"},
                   .timeout = absl::Seconds(60)});
  EXPECT_EQ(background.exit_code, 0) << background.killed;
  EXPECT_EQ(background.out, "started\n");
  std::cout << "a run leaving two background jobs ended in " << absl::Now() - bg_start << std::endl;
  GuestRun survivors =
      Exec(guest, {.argv = {"sh", "-c",
                            "for p in /proc/[0-9]*; do c=$(cat $p/comm 2>/dev/null); "
                            "[ \"$c\" = sleep ] && echo \"${p#/proc/} $c\"; done; true"}});
  EXPECT_EQ(survivors.out, "") << "processes outlived their run";
  // Orphans the agent inherits during a run are reaped: none is left a zombie.
  GuestRun zombies =
      Exec(guest, {.argv = {"sh", "-c",
                            "(sleep 0.2 &); sleep 2.5; grep -l '^State:.*Z' /proc/[0-9]*/status "
                            "2>/dev/null; true"}});
  EXPECT_EQ(zombies.out, "") << "an orphan was left a zombie";

  // No network device in the guest: only the loopback exists.
  GuestRun net = Exec(guest, {.argv = {"ls", "/sys/class/net"}});
  EXPECT_EQ(net.out, "lo\n");

  constexpr int kTrues = 10;
  const absl::Time runs = absl::Now();
  for (int i = 0; i < kTrues; ++i) EXPECT_EQ(Exec(guest, {.argv = {"true"}}).exit_code, 0);
  std::cout << "Exec of `true` in the warm microVM: " << (absl::Now() - runs) / kTrues
            << " (mean of " << kTrues << ")" << std::endl;
  EXPECT_EQ(guest.State(&cause), v1::SANDBOX_STATE_WARM) << cause;

  EXPECT_THAT(Entries(config_.state_root), ::testing::SizeIs(1));
  ASSERT_TRUE(guest.Stop(absl::Seconds(2)).ok());
  EXPECT_EQ(guest.State(&cause), v1::SANDBOX_STATE_DESTROYED);
  EXPECT_EQ(kill(hi.hypervisor_pid, 0), -1) << "qemu outlived Stop";
  EXPECT_FALSE(PathExists(absl::StrCat("/proc/", hi.hypervisor_pid)));
  EXPECT_THAT(Entries(config_.state_root), ::testing::IsEmpty());
  EXPECT_TRUE(guest.Stop(absl::Seconds(2)).ok());  // idempotent
  EXPECT_EQ(guest.Exec({.argv = {"true"}}, [](const v1::SandboxEvent&) { return true; }).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(QemuRuntimeTest, APanickedGuestIsInErrorWithTheCause) {
  QemuRuntime runtime(config_);
  absl::StatusOr<std::unique_ptr<Guest>> started = runtime.Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  GuestRun panic =
      Exec(**started, {.argv = {"sh", "-c", "echo c > /proc/sysrq-trigger; sleep 30"}});
  EXPECT_EQ(panic.killed, "sandbox-ended");
  std::string cause;
  EXPECT_EQ((*started)->State(&cause), v1::SANDBOX_STATE_ERROR);
  EXPECT_THAT(cause, ::testing::HasSubstr("the guest panicked")) << cause;
  started->reset();  // the destructor stops it too
  EXPECT_THAT(Entries(config_.state_root), ::testing::IsEmpty());
}

// A guest that hangs without panicking or exiting (here: its qemu stopped) is found out: idle,
// by the runtime's watchdog (the session is told); during a run, by the run itself.
TEST_F(QemuRuntimeTest, AHungGuestIsInErrorWithTheCause) {
  config_.answer_timeout = absl::Seconds(3);
  QemuRuntime runtime(config_);
  std::mutex mu;
  std::vector<std::string> lost;
  absl::StatusOr<std::unique_ptr<Guest>> idle =
      runtime.Start({.lost = [&](const std::string& cause) {
        std::lock_guard<std::mutex> lock(mu);
        lost.push_back(cause);
      }});
  ASSERT_TRUE(idle.ok()) << idle.status();
  const int idle_pid = Exec(**idle, {.argv = {"true"}}).hypervisor_pid;
  ASSERT_GT(idle_pid, 0);
  // Still answering after several questions' worth of idle time.
  absl::SleepFor(absl::Seconds(4));
  std::string cause;
  EXPECT_EQ((*idle)->State(&cause), v1::SANDBOX_STATE_WARM) << cause;
  ASSERT_EQ(kill(idle_pid, SIGSTOP), 0);
  const absl::Time stopped = absl::Now();
  while ((*idle)->State(&cause) != v1::SANDBOX_STATE_ERROR &&
         absl::Now() < stopped + absl::Seconds(60)) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ((*idle)->State(&cause), v1::SANDBOX_STATE_ERROR);
  EXPECT_THAT(cause, ::testing::HasSubstr("the guest stopped answering")) << cause;
  std::cout << "an idle hung guest found after " << absl::Now() - stopped << std::endl;
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(lost.size(), 1u);
    EXPECT_THAT(lost[0], ::testing::HasSubstr("the guest stopped answering"));
  }
  EXPECT_EQ(kill(idle_pid, 0), -1) << "a hung guest's qemu was left running";

  absl::StatusOr<std::unique_ptr<Guest>> busy = runtime.Start({});
  ASSERT_TRUE(busy.ok()) << busy.status();
  int busy_pid = 0;
  std::string detail;
  const absl::Status status =
      (*busy)->Exec({.argv = {"sleep", "1000"}}, [&](const v1::SandboxEvent& event) {
        if (event.has_ready()) {
          busy_pid = event.ready().pid();
          kill(busy_pid, SIGSTOP);
        }
        if (event.has_killed()) {
          detail = event.killed().reason() + ": " + event.killed().detail();
        }
        return true;
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_THAT(detail, ::testing::StartsWith("sandbox-ended: the guest stopped answering"));
  EXPECT_EQ((*busy)->State(&cause), v1::SANDBOX_STATE_ERROR);
  EXPECT_GT(busy_pid, 0);
  EXPECT_EQ(kill(busy_pid, 0), -1) << "a hung guest's qemu was left running";
  idle->reset();
  busy->reset();
  EXPECT_THAT(Entries(config_.state_root), ::testing::IsEmpty());
}

TEST_F(QemuRuntimeTest, WhatTheGuestCannotHonourYetIsRefusedAndStartsNothing) {
  QemuRuntime runtime(config_);
  v1::SandboxSpec binds;
  binds.add_bind_mounts()->set_host_path("/tmp");
  absl::StatusOr<std::unique_ptr<Guest>> refused = runtime.Start({.spec = binds});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), ::testing::HasSubstr("bind mount"));
  EXPECT_THAT(Entries(config_.state_root), ::testing::IsEmpty());
}

// The guest's only way out: the session's proxies. Its HTTP proxy is the broker's real one (the
// allowlist decides, a refusal is a 403 and a violation event); its SOCKS socket is a stand-in
// server, reached through the guest's 127.0.0.1:1080.
TEST_F(QemuRuntimeTest, EgressReachesTheSessionsProxiesOnly) {
  using broker::microvm::StandInServer;
  auto upstream = StandInServer::OnLoopback(StandInServer::Mode::kAnswer,
                                            "HTTP/1.0 200 OK\r\n\r\nupstream says hi\n");
  constexpr size_t kBigBody = 16 << 20;
  auto big = StandInServer::OnLoopback(StandInServer::Mode::kAnswer,
                                       "HTTP/1.0 200 OK\r\n\r\n" + std::string(kBigBody, 'b'));
  proxy::EventLoop loop;
  auto resolver = std::make_shared<proxy::StaticResolver>();
  resolver->Add("allowed.test", {"127.0.0.1"});
  resolver->Add("big.test", {"127.0.0.1"});
  absl::StatusOr<std::unique_ptr<broker::RuntimeDir>> runtime_dir =
      broker::RuntimeDir::Open(absl::StrCat(config_.state_root, "/run"));
  ASSERT_TRUE(runtime_dir.ok()) << runtime_dir.status();
  broker::SessionEvents events;
  broker::SessionEgress egress(loop, resolver, **runtime_dir, events);
  v1::SandboxSpec spec;
  spec.set_session_id("vm");
  spec.set_network_enabled(true);
  // A loopback address is reached only under an entry naming that exact host and port.
  spec.add_egress_allowlist(absl::StrCat("allowed.test:", upstream->port()));
  spec.add_egress_allowlist(absl::StrCat("big.test:", big->port()));
  absl::StatusOr<broker::EgressSummary> plan = egress.Start(spec);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::mutex mu;
  std::vector<v1::SandboxEvent> violations;
  events.Subscribe("vm", [&](const v1::SandboxEvent& event) {
    std::lock_guard<std::mutex> lock(mu);
    if (event.has_violation()) violations.push_back(event);
  });
  StandInServer socks(absl::StrCat(config_.state_root, "/socks.sock"), StandInServer::Mode::kAnswer,
                      "socks stand-in\n");

  QemuRuntime runtime(config_);
  absl::StatusOr<std::unique_ptr<Guest>> started =
      runtime.Start({.spec = spec,
                     .egress = broker::microvm::GuestEgress{.http_socket = plan->plan.http_socket(),
                                                            .socks_socket = socks.path()}});
  ASSERT_TRUE(started.ok()) << started.status();
  Guest& guest = **started;

  GuestRun env = Exec(guest, {.argv = {"sh", "-c", "echo $http_proxy $ALL_PROXY"}});
  EXPECT_EQ(env.out, "http://127.0.0.1:3128 socks5h://127.0.0.1:1080\n");

  GuestRun allowed =
      Exec(guest, {.argv = {"wget", "-q", "-O", "-",
                            absl::StrCat("http://allowed.test:", upstream->port(), "/hello")}});
  EXPECT_EQ(allowed.out, "upstream says hi\n") << allowed.err;
  EXPECT_EQ(allowed.exit_code, 0);
  EXPECT_THAT(upstream->last_request(), ::testing::HasSubstr("GET /hello"));

  GuestRun refused = Exec(guest, {.argv = {"sh", "-c",
                                           "printf 'CONNECT refused.test:443 HTTP/1.1\\r\\nHost: "
                                           "refused.test:443\\r\\n\\r\\n' | nc 127.0.0.1 3128"}});
  EXPECT_THAT(refused.out, ::testing::StartsWith("HTTP/1.1 403")) << refused.err;
  egress.Flush(absl::Seconds(10));
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(violations.size(), 1u);
    EXPECT_EQ(violations[0].violation().action(), "network-outbound");
    EXPECT_EQ(violations[0].violation().target(), "refused.test:443");
  }
  EXPECT_EQ(resolver->lookups("refused.test"), 0);

  GuestRun socks_run =
      Exec(guest, {.argv = {"sh", "-c", "printf 'hello\\r\\n\\r\\n' | nc 127.0.0.1 1080"}});
  EXPECT_EQ(socks_run.out, "socks stand-in\n") << socks_run.err;
  EXPECT_EQ(socks.last_request(), "hello\r\n\r\n");

  // A figure, not an assertion: a download through the channel and the real proxy (tcg).
  const absl::Time download = absl::Now();
  GuestRun bulk = Exec(
      guest, {.argv = {"sh", "-c",
                       absl::StrCat("wget -q -O - http://big.test:", big->port(), "/ | wc -c")}});
  const double seconds = absl::ToDoubleSeconds(absl::Now() - download);
  EXPECT_EQ(bulk.out, absl::StrCat(kBigBody, "\n")) << bulk.err;
  std::cout << "microVM egress download of 16 MiB through the session's HTTP proxy (tcg): "
            << (kBigBody >> 20) / seconds << " MiB/s" << std::endl;
  // Next to the agent's own channel: the same bytes as a run's stdout.
  const absl::Time output = absl::Now();
  GuestRun zeros = Exec(guest, {.argv = {"head", "-c", absl::StrCat(kBigBody), "/dev/zero"}});
  EXPECT_EQ(zeros.out.size(), kBigBody);
  std::cout << "the same 16 MiB as a run's stdout over the agent's port (tcg): "
            << (kBigBody >> 20) / absl::ToDoubleSeconds(absl::Now() - output) << " MiB/s"
            << std::endl;

  // Still no network device: the loopback and the channel are all there is.
  EXPECT_EQ(Exec(guest, {.argv = {"ls", "/sys/class/net"}}).out, "lo\n");
  GuestRun direct = Exec(guest, {.argv = {"wget", "-q", "-O", "-", "-Y", "off",
                                          absl::StrCat("http://10.0.2.2:", upstream->port())}});
  EXPECT_NE(direct.exit_code, 0);

  std::string cause;
  EXPECT_EQ(guest.State(&cause), v1::SANDBOX_STATE_WARM) << cause;
  ASSERT_TRUE(guest.Stop(absl::Seconds(2)).ok());
  egress.Stop("vm");
}

TEST_F(QemuRuntimeTest, ABootThatFailsLeavesNoFile) {
  config_.kernel = config_.image;  // not a kernel: qemu refuses it
  QemuRuntime runtime(config_);
  absl::StatusOr<std::unique_ptr<Guest>> failed = runtime.Start({});
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable) << failed.status();
  EXPECT_THAT(Entries(config_.state_root), ::testing::IsEmpty());
}

}  // namespace
}  // namespace ccsandbox::testing
