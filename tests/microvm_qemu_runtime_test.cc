// The QEMU microVM runtime against real qemu (under tcg: these hosts' KVM cannot run the guest,
// docs/microvm.md) and the session image scripts/install-deps.sh builds: one VM serves the
// Exec tests, Stop must leave no qemu and no file; a second one panics. Prints its figures.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "broker/microvm/qemu_runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/sandbox.pb.h"
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

TEST_F(QemuRuntimeTest, WhatTheGuestCannotHonourYetIsRefusedAndStartsNothing) {
  QemuRuntime runtime(config_);
  v1::SandboxSpec binds;
  binds.add_bind_mounts()->set_host_path("/tmp");
  absl::StatusOr<std::unique_ptr<Guest>> refused = runtime.Start({.spec = binds});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), ::testing::HasSubstr("bind mount"));
  v1::SandboxSpec network;
  network.set_network_enabled(true);
  refused = runtime.Start({.spec = network});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), ::testing::HasSubstr("network"));
  EXPECT_THAT(Entries(config_.state_root), ::testing::IsEmpty());
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
