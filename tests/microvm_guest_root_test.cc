// The microVM guest's root against real qemu (tcg) and the session image: host directories
// shared over 9p read-write and read-only, the deny sets honoured by the guest's kernel, the
// host's userland running in the guest, and a workload that cannot undo any of it. One VM
// serves the checks; a second one's setup fails and must leave nothing running.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/real_host_view.h"
#include "broker/microvm/guest_layout.h"
#include "broker/microvm/qemu_runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policy/plan/bwrap_argv.h"
#include "proto/launcher.pb.h"
#include "proto/sandbox.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/microvm_test_config.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {
namespace {

using broker::microvm::Guest;
using broker::microvm::GuestLayout;
using broker::microvm::GuestLayoutFromPlan;
using broker::microvm::QemuRuntime;
using broker::microvm::QemuRuntimeConfig;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Result {
  std::string out, err;
  std::optional<int> exit_code;
};

// `script` under the host's /bin/sh, in the guest.
Result Sh(Guest& guest, const std::string& script) {
  Result result;
  const absl::Status status =
      guest.Exec({.argv = {"sh", "-c", script}, .env = {{"PATH", "/usr/bin:/bin:/usr/sbin"}}},
                 [&](const v1::SandboxEvent& event) {
                   if (event.has_stdout()) result.out += event.stdout();
                   if (event.has_stderr()) result.err += event.stderr();
                   if (event.has_exit()) result.exit_code = event.exit().exit_code();
                   return true;
                 });
  EXPECT_TRUE(status.ok()) << status;
  return result;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The pids of processes whose command line names `text` (a guest's qemu names its state dir).
std::vector<std::string> ProcessesNaming(const std::string& text) {
  std::vector<std::string> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (ReadFile(entry.path() / "cmdline").find(text) != std::string::npos) pids.push_back(pid);
  }
  return pids;
}

class GuestRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char root[] = "/tmp/ccsandbox-grt-XXXXXX";
    ASSERT_NE(mkdtemp(root), nullptr);
    root_ = root;
    config_ = MicrovmTestConfig(root_ + "/state");
    if (const std::string missing = MissingMicrovmImage(config_); !missing.empty()) {
      CCSANDBOX_SKIP_OR_FAIL_IN_CI(missing);
    }
    if (getuid() != 0) CCSANDBOX_SKIP_OR_FAIL_IN_CI("needs root (9p shares of any host file)");
    rw_ = root_ + "/rw";
    ro_ = root_ + "/ro";
    comma_ = root_ + "/c,readonly=on";
    for (const std::string& dir : {config_.state_root, rw_, ro_, comma_, rw_ + "/secretdir",
                                   rw_ + "/a/b", rw_ + "/gitdir"}) {
      std::filesystem::create_directories(dir);
    }
    WriteFile(rw_ + "/secret.txt", "TOPSECRET\n");
    WriteFile(rw_ + "/secretdir/key", "KEY\n");
    WriteFile(rw_ + "/a/b/secret2", "DEEP\n");
    WriteFile(rw_ + "/protected.txt", "keep\n");
    WriteFile(rw_ + "/gitdir/config", "cfg\n");
    WriteFile(ro_ + "/readme", "ro\n");
  }
  void TearDown() override {
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }

  // The plan the broker would give the native backend, and the spec's binds to match.
  void Plan(v1::LaunchPlan* plan, v1::SandboxSpec* spec) {
    for (const auto& [dir, read_only] :
         {std::pair{rw_, false}, std::pair{ro_, true}, std::pair{comma_, false}}) {
      auto* mount = plan->add_mounts();
      mount->set_host_path(dir);
      mount->set_guest_path(dir);
      mount->set_read_only(read_only);
      auto* bind = spec->add_bind_mounts();
      bind->set_host_path(dir);
      bind->set_guest_path(dir);
      bind->set_read_only(read_only);
    }
    plan->add_deny_read_paths(rw_ + "/secret.txt");
    plan->add_deny_read_paths(rw_ + "/secretdir");
    plan->add_deny_read_paths(rw_ + "/a/b/secret2");
    plan->add_deny_write_paths(rw_ + "/protected.txt");
    plan->add_deny_write_paths(rw_ + "/gitdir");
    plan->set_workdir(rw_);
  }

  std::string root_, rw_, ro_, comma_;
  QemuRuntimeConfig config_;
};

TEST_F(GuestRootTest, SharesAndDenySetsHoldInTheGuest) {
  v1::LaunchPlan plan;
  v1::SandboxSpec spec;
  Plan(&plan, &spec);
  RealHostView host;
  absl::StatusOr<GuestLayout> layout =
      GuestLayoutFromPlan(plan, policy::DefaultSystemRoDirs(), host);
  ASSERT_TRUE(layout.ok()) << layout.status();
  QemuRuntime runtime(config_);
  const absl::Time boot = absl::Now();
  absl::StatusOr<std::unique_ptr<Guest>> started = runtime.Start({.spec = spec, .layout = *layout});
  ASSERT_TRUE(started.ok()) << started.status();
  std::cout << "microVM cold boot to warm with " << layout->shares.size()
            << " shares (tcg): " << absl::Now() - boot << std::endl;
  Guest& guest = **started;

  // The host's userland, in the workdir.
  Result env = Sh(guest, "pwd; /usr/bin/env | grep ^PATH=; ls /bin/sh");
  EXPECT_EQ(env.out, absl::StrCat(rw_, "\nPATH=/usr/bin:/bin:/usr/sbin\n/bin/sh\n")) << env.err;
  if (PathExists("/usr/bin/python3")) {
    Result py = Sh(guest, "python3 -c 'import sys; print(sys.version_info[0])'");
    EXPECT_EQ(py.out, "3\n") << py.err;
  }

  // Read-write share: on the host. Read-only share: EROFS.
  Result rw = Sh(guest, "echo from-guest > new.txt");
  EXPECT_EQ(rw.exit_code, 0) << rw.err;
  EXPECT_EQ(ReadFile(rw_ + "/new.txt"), "from-guest\n");
  Result ro = Sh(guest, absl::StrCat("cat ", ro_, "/readme; echo x > ", ro_, "/readme"));
  EXPECT_EQ(ro.out, "ro\n");
  EXPECT_NE(ro.exit_code, 0);
  EXPECT_THAT(ro.err, HasSubstr("Read-only file system"));
  EXPECT_EQ(ReadFile(ro_ + "/readme"), "ro\n");
  // A comma in the host path is not an option: that share is writable.
  Result comma = Sh(guest, absl::StrCat("echo c > '", comma_, "/f'"));
  EXPECT_EQ(comma.exit_code, 0) << comma.err;
  EXPECT_EQ(ReadFile(comma_ + "/f"), "c\n");

  // Deny-read: the file reads empty, the directory is empty and read-only, on the host all stay.
  Result secret = Sh(guest, "cat secret.txt a/b/secret2; ls -A secretdir; touch secretdir/x");
  EXPECT_EQ(secret.out, "");
  EXPECT_NE(secret.exit_code, 0);
  EXPECT_EQ(ReadFile(rw_ + "/secret.txt"), "TOPSECRET\n");
  EXPECT_EQ(ReadFile(rw_ + "/secretdir/key"), "KEY\n");
  EXPECT_FALSE(PathExists(rw_ + "/secretdir/x"));

  // Deny-write: unwritable, and neither it nor an ancestor of a secret can be moved away.
  for (const char* attempt :
       {"echo x >> protected.txt", "echo x > gitdir/config", "touch gitdir/new",
        "mv protected.txt moved.txt", "rm -f protected.txt", "mv gitdir gitdir2", "mv a a2",
        "mv secretdir s2", "rm -rf gitdir"}) {
    SCOPED_TRACE(attempt);
    Result r = Sh(guest, attempt);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_THAT(r.err,
                AnyOf(HasSubstr("Read-only file system"), HasSubstr("Device or resource busy")));
  }
  EXPECT_EQ(ReadFile(rw_ + "/protected.txt"), "keep\n");
  EXPECT_EQ(ReadFile(rw_ + "/gitdir/config"), "cfg\n");
  EXPECT_TRUE(PathExists(rw_ + "/a/b/secret2"));
  EXPECT_FALSE(PathExists(rw_ + "/gitdir/new"));

  // The workload cannot undo the layout: no unmount, no mount, no remount, no chroot.
  for (const char* attempt :
       {"umount secretdir", "umount -l secret.txt", "mount -t tmpfs none secretdir",
        "mount -o remount,rw gitdir", "mount --bind /tmp secretdir", "chroot / true",
        // PID 1 (the agent) sees the initramfs: its root is not a way out of the chroot.
        "ls /proc/1/root/ccsandbox-agent"}) {
    SCOPED_TRACE(attempt);
    Result undo = Sh(guest, attempt);
    EXPECT_NE(undo.exit_code, 0) << undo.out;
    EXPECT_THAT(undo.err, AnyOf(HasSubstr("must be superuser"), HasSubstr("permission denied"),
                                HasSubstr("Permission denied"), HasSubstr("not permitted")));
  }
  Result still = Sh(guest, "cat secret.txt; ls -A secretdir; grep ^CapBnd /proc/self/status");
  EXPECT_EQ(still.out.substr(0, still.out.find("CapBnd")), "");
  // CAP_SYS_ADMIN (21) is not in the bounding set.
  const std::string bound = still.out.substr(still.out.find('\t') + 1);
  EXPECT_EQ(std::stoull(bound, nullptr, 16) & (1ull << 21), 0u) << still.out;

  // The guest's /proc/sys is its own kernel's (and read-only); its /tmp is private.
  const std::string host_domain = ReadFile("/proc/sys/kernel/domainname");
  Result sys = Sh(guest, "echo ccsandbox-guest > /proc/sys/kernel/domainname");
  EXPECT_NE(sys.exit_code, 0);
  EXPECT_EQ(ReadFile("/proc/sys/kernel/domainname"), host_domain);
  const std::string tmp_name = absl::StrCat("/tmp/ccsandbox-grt-private-", getpid());
  Result tmp = Sh(guest, absl::StrCat("echo x > ", tmp_name, " && cat ", tmp_name));
  EXPECT_EQ(tmp.out, "x\n") << tmp.err;
  EXPECT_FALSE(PathExists(tmp_name));
  // Nothing of the host but the shares: not its home, not its state; of the guest's devices
  // only the minimal /dev (not the agent's port).
  EXPECT_NE(Sh(guest, "ls /root /var/cache/ccsandbox").exit_code, 0);
  Result dev = Sh(guest, "ls /dev");
  EXPECT_EQ(dev.out,
            "fd\nfull\nnull\nptmx\npts\nrandom\nshm\nstderr\nstdin\nstdout\ntty\nurandom\nzero\n");

  ASSERT_TRUE(guest.Stop(absl::Seconds(2)).ok());
  EXPECT_TRUE(std::filesystem::is_empty(config_.state_root));
}

TEST_F(GuestRootTest, ASetupThatFailsIsUnavailableAndLeavesNothing) {
  // A mount point the guest cannot make: below a read-only share, missing.
  GuestLayout layout;
  layout.shares = {{ro_, ro_, true}, {rw_, ro_ + "/missing", false}};
  QemuRuntime runtime(config_);
  absl::StatusOr<std::unique_ptr<Guest>> failed =
      runtime.Start({.spec = v1::SandboxSpec(), .layout = layout});
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable) << failed.status();
  EXPECT_THAT(failed.status().message(), HasSubstr(ro_ + "/missing"));
  EXPECT_TRUE(std::filesystem::is_empty(config_.state_root));
  EXPECT_THAT(ProcessesNaming(config_.state_root), IsEmpty());
}

// The limit is real: every one of kMaxGuestShares shares reaches the guest; one more is refused.
TEST_F(GuestRootTest, AsManySharesAsTheMachineHasRoomFor) {
  v1::LaunchPlan plan;
  const int mounts = broker::microvm::kMaxGuestShares - 2;  // with /usr and /etc
  for (int i = 0; i < mounts; ++i) {
    const std::string dir = absl::StrCat(root_, "/many/", i);
    std::filesystem::create_directories(dir);
    WriteFile(dir + "/n", absl::StrCat(i));
    auto* mount = plan.add_mounts();
    mount->set_host_path(dir);
    mount->set_guest_path(dir);
    mount->set_read_only(true);
  }
  RealHostView host;
  absl::StatusOr<GuestLayout> layout =
      GuestLayoutFromPlan(plan, policy::DefaultSystemRoDirs(), host);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->shares.size(), static_cast<size_t>(broker::microvm::kMaxGuestShares));
  QemuRuntime runtime(config_);
  GuestLayout one_more = *layout;
  one_more.shares.push_back({ro_, ro_, true});
  EXPECT_EQ(runtime.Start({.spec = v1::SandboxSpec(), .layout = one_more}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<std::unique_ptr<Guest>> started =
      runtime.Start({.spec = v1::SandboxSpec(), .layout = *layout});
  ASSERT_TRUE(started.ok()) << started.status();
  Result all = Sh(**started, absl::StrCat("cat ", root_, "/many/*/n | wc -c"));
  // "0" .. "19": 10 one-digit and 10 two-digit numbers.
  EXPECT_EQ(all.out, absl::StrCat(10 + 2 * (mounts - 10), "\n")) << all.err;
}

TEST_F(GuestRootTest, BindsTheLayoutDoesNotShareAreRefused) {
  v1::SandboxSpec spec;
  auto* bind = spec.add_bind_mounts();
  bind->set_host_path(rw_);
  bind->set_guest_path(rw_);
  GuestLayout layout;
  layout.shares = {{rw_, rw_, false}};
  QemuRuntime runtime(config_);
  // Shared writable: a read-only bind would be looser in the guest.
  bind->set_read_only(true);
  EXPECT_EQ(runtime.Start({.spec = spec, .layout = layout}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  bind->set_host_path(ro_);
  EXPECT_EQ(runtime.Start({.spec = spec, .layout = layout}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(runtime.Start({.spec = spec}).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(std::filesystem::is_empty(config_.state_root));
}

}  // namespace
}  // namespace ccsandbox::testing
