// The microvm session tests' fixture: the real daemons with the microVM runtime configured
// (real qemu under tcg, the session image of scripts/microvm-image.sh), for the root and the
// unprivileged broker, and the calls those tests make (Launch as microvm, Exec collected,
// GetSession, Destroy) and what they inspect on the host (hypervisors, state directories).
#ifndef CCSANDBOX_TESTS_MICROVM_SESSION_FIXTURE_H_
#define CCSANDBOX_TESTS_MICROVM_SESSION_FIXTURE_H_

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {

inline constexpr char kImageDir[] = "/var/cache/ccsandbox/microvm";
inline constexpr char kQemu[] = "/usr/bin/qemu-system-x86_64";

struct GuestRun {
  std::string out, err;
  std::optional<int> exit_code;
  std::string killed, killed_detail;
  int pid = 0;
  std::vector<std::string> violations;
  grpc::Status status;
  bool all_microvm = true;
};

// The Uid: line of /proc/PID/status (its real uid), or -1.
inline int UidOf(int pid) {
  for (absl::string_view line :
       absl::StrSplit(ReadFile(absl::StrCat("/proc/", pid, "/status")), '\n')) {
    if (!absl::ConsumePrefix(&line, "Uid:")) continue;
    std::vector<std::string> ids = absl::StrSplit(line, '\t', absl::SkipWhitespace());
    int uid = -1;
    if (!ids.empty() && absl::SimpleAtoi(ids[0], &uid)) return uid;
  }
  return -1;
}

inline std::string NamespaceOf(const std::string& pid, const std::string& kind) {
  return std::filesystem::read_symlink(absl::StrCat("/proc/", pid, "/ns/", kind)).string();
}

inline bool Alive(int pid) { return pid > 0 && kill(pid, 0) == 0; }

inline bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

// The host pid of the live hypervisor whose command line names `marker` (its state directory
// is under the test's own root), or 0.
inline int HypervisorNaming(const std::string& marker) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    const std::string cmdline = ReadFile(absl::StrCat("/proc/", pid, "/cmdline"));
    if (absl::StartsWith(cmdline, "/usr/bin/qemu-system") && absl::StrContains(cmdline, marker)) {
      return pid;
    }
  }
  return 0;
}

inline bool GoneWithin(int pid, absl::Duration limit) {
  const absl::Time deadline = absl::Now() + limit;
  while (Alive(pid) && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(50));
  return !Alive(pid);
}

class MicrovmSessionFixture : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    const std::string kernel = absl::StrCat(kImageDir, "/vmlinuz");
    if (!PathExists(kQemu) || !PathExists(kernel) ||
        !PathExists(absl::StrCat(kImageDir, "/agent-initrd.img"))) {
      CCSANDBOX_SKIP_OR_FAIL_IN_CI(absl::StrCat("no qemu or session image in ", kImageDir,
                                                " (scripts/install-deps.sh builds it)"));
    }
    // What the broker reads must be readable by the unprivileged broker too: the agent from a
    // copy (the build tree under /root is not), its state root in a directory of its own.
    char dir[] = "/tmp/ccs-vm.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    files_ = dir;
    chmod(dir, 0755);
    const std::string agent = files_ + "/ccsandbox_agent";
    if (agent_script_.empty()) {
      ASSERT_EQ(
          RunProgram({"cp", Runfile("broker/microvm/agent/ccsandbox_agent"), agent}).exit_code, 0);
    } else {
      ASSERT_TRUE(WriteFile(agent, agent_script_));
    }
    chmod(agent.c_str(), 0755);
    if (GetParam()) {
      absl::StatusOr<launcher::Identity> user = UnprivilegedTestUser();
      ASSERT_TRUE(user.ok()) << user.status();
      ASSERT_EQ(chown(dir, user->uid, user->gid), 0);
    }
    state_root_ = files_ + "/state";
    // A terminal's working directory ($HOME): the broker's to bind into the guest.
    const std::string home = files_ + "/home";
    ASSERT_EQ(mkdir(home.c_str(), 0755), 0);
    if (GetParam()) {
      absl::StatusOr<launcher::Identity> user = UnprivilegedTestUser();
      ASSERT_TRUE(user.ok()) << user.status();
      ASSERT_EQ(chown(home.c_str(), user->uid, user->gid), 0);
    }
    absl::StatusOr<std::unique_ptr<Daemons>> started = Daemons::Start(
        {.broker_env = {"HOME=" + home, "SHELL=/bin/sh"},
         .broker_flags = {absl::StrCat("--microvm-hypervisor=", kQemu),
                          absl::StrCat("--microvm-kernel=", kernel),
                          absl::StrCat("--microvm-initrd=", kImageDir, "/probe-initrd.img"),
                          "--microvm-accel=tcg", "--microvm-boot-timeout=25s",
                          "--microvm-agent=" + agent, "--microvm-state-dir=" + state_root_,
                          absl::StrCat("--microvm-max-guests=", max_guests_)},
         .unprivileged_broker = GetParam()});
    ASSERT_TRUE(started.ok()) << started.status();
    daemons_ = *std::move(started);
    stub_ = v1::SandboxBroker::NewStub(
        grpc::CreateChannel(daemons_->broker_address(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    daemons_.reset();
    if (!files_.empty()) std::filesystem::remove_all(files_);
  }

  grpc::Status Launch(const std::string& id, v1::SandboxHandle* handle,
                      v1::SandboxSpec spec = v1::SandboxSpec()) {
    v1::LaunchRequest request;
    request.set_backend("microvm");
    spec.set_session_id(id);
    spec.set_mode("chat");
    spec.set_network_enabled(false);
    *request.mutable_spec() = spec;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    return stub_->Launch(&context, request, handle);
  }

  GuestRun Exec(const std::string& id, std::vector<std::string> argv,
                const std::string& stdin_data = "", uint32_t timeout_seconds = 0) {
    v1::ExecRequest request;
    request.set_session_id(id);
    for (const std::string& arg : argv) request.add_argv(arg);
    request.set_stdin(stdin_data);
    request.set_timeout_ms(uint64_t{timeout_seconds} * 1000);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader = stub_->Exec(&context, request);
    GuestRun run;
    v1::SandboxEvent event;
    while (reader->Read(&event)) {
      if (event.backend() != v1::SANDBOX_BACKEND_MICROVM) run.all_microvm = false;
      if (event.has_ready()) run.pid = static_cast<int>(event.ready().pid());
      if (event.has_violation()) run.violations.push_back(event.violation().target());
      run.out += event.stdout();
      run.err += event.stderr();
      if (event.has_exit()) run.exit_code = event.exit().exit_code();
      if (event.has_killed()) {
        run.killed = event.killed().reason();
        run.killed_detail = event.killed().detail();
      }
    }
    run.status = reader->Finish();
    return run;
  }

  // Launches session `id` (no binds) and returns its hypervisor's host pid; 0, the failure
  // recorded, when the Launch failed or no hypervisor of it is found.
  int LaunchWithHypervisor(const std::string& id) {
    v1::SandboxHandle handle;
    const grpc::Status launched = Launch(id, &handle);
    if (!launched.ok()) {
      ADD_FAILURE() << launched.error_message() << "\n" << daemons_->BrokerLog();
      return 0;
    }
    const int qemu = HypervisorNaming(state_root_);
    if (qemu == 0) ADD_FAILURE() << "no hypervisor for session " << id;
    return qemu;
  }

  v1::SandboxHandle Get(const std::string& id) {
    grpc::ClientContext context;
    v1::SessionRequest request;
    request.set_session_id(id);
    v1::SandboxHandle handle;
    EXPECT_TRUE(stub_->GetSession(&context, request, &handle).ok());
    return handle;
  }

  grpc::Status Destroy(const std::string& id) {
    grpc::ClientContext context;
    v1::SessionRequest request;
    request.set_session_id(id);
    v1::SandboxHandle handle;
    return stub_->Destroy(&context, request, &handle);
  }

  // The session directories under the broker's microVM state root (one per live guest).
  std::vector<std::string> StateDirs() {
    std::vector<std::string> dirs;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(state_root_ + "/s", error)) {
      dirs.push_back(entry.path().string());
    }
    return dirs;
  }

  int max_guests_ = 16;  // --microvm-max-guests; a test's constructor may change it
  // In place of the real agent: a script the session image's busybox runs as the guest's
  // /ccsandbox-agent (a guest whose kernel, and so whose port, is hostile); set by a constructor.
  std::string agent_script_;
  std::string files_, state_root_;
  std::unique_ptr<Daemons> daemons_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
};

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_MICROVM_SESSION_FIXTURE_H_
