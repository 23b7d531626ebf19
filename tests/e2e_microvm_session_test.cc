// microvm sessions against the real daemons, real qemu (tcg) and the session image
// (scripts/microvm-image.sh): Launch boots a guest whose hypervisor runs inside the session's
// native sandbox (never host root, never the host's namespaces), Exec runs in the guest,
// Kill, one run at a time, Destroy and a killed launcher leave no hypervisor and no file, and a
// guest that panics puts the session in error with the cause; a microvm terminal runs its shell
// on the PTY of a guest of its own. For the root and the unprivileged broker.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <ios>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {
namespace {

constexpr char kImageDir[] = "/var/cache/ccsandbox/microvm";
constexpr char kQemu[] = "/usr/bin/qemu-system-x86_64";

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
int UidOf(int pid) {
  for (absl::string_view line :
       absl::StrSplit(ReadFile(absl::StrCat("/proc/", pid, "/status")), '\n')) {
    if (!absl::ConsumePrefix(&line, "Uid:")) continue;
    std::vector<std::string> ids = absl::StrSplit(line, '\t', absl::SkipWhitespace());
    int uid = -1;
    if (!ids.empty() && absl::SimpleAtoi(ids[0], &uid)) return uid;
  }
  return -1;
}

std::string NamespaceOf(const std::string& pid, const std::string& kind) {
  return std::filesystem::read_symlink(absl::StrCat("/proc/", pid, "/ns/", kind)).string();
}

bool Alive(int pid) { return pid > 0 && kill(pid, 0) == 0; }

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

// The host pid of the live hypervisor whose command line names `marker` (its state directory
// is under the test's own root), or 0.
int HypervisorNaming(const std::string& marker) {
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

bool GoneWithin(int pid, absl::Duration limit) {
  const absl::Time deadline = absl::Now() + limit;
  while (Alive(pid) && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(50));
  return !Alive(pid);
}

class MicrovmSessionTest : public ::testing::TestWithParam<bool> {
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
    ASSERT_EQ(RunProgram({"cp", Runfile("broker/microvm/agent/ccsandbox_agent"), agent}).exit_code,
              0);
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
                          "--microvm-agent=" + agent, "--microvm-state-dir=" + state_root_},
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

  std::string files_, state_root_;
  std::unique_ptr<Daemons> daemons_;
  std::unique_ptr<v1::SandboxBroker::Stub> stub_;
};

TEST_P(MicrovmSessionTest, RunsInItsGuestWhoseHypervisorIsConfinedAndLeavesNothing) {
  v1::SandboxHandle handle;
  const grpc::Status launched = Launch("vm1", &handle);
  ASSERT_TRUE(launched.ok()) << launched.error_message() << "\n" << daemons_->BrokerLog();
  EXPECT_EQ(handle.backend(), v1::SANDBOX_BACKEND_MICROVM);
  EXPECT_EQ(handle.state(), v1::SANDBOX_STATE_WARM);
  EXPECT_EQ(StateDirs().size(), 1u);

  // stdio, stdin and the exit code, every event labelled microvm.
  GuestRun run =
      Exec("vm1", {"/bin/sh", "-c", "echo out; echo err >&2; read x; echo got:$x; exit 7"}, "hi\n");
  ASSERT_TRUE(run.status.ok()) << run.status.error_message();
  EXPECT_EQ(run.out, "out\ngot:hi\n");
  EXPECT_EQ(run.err, "err\n");
  EXPECT_EQ(run.exit_code, 7);
  EXPECT_TRUE(run.all_microvm);

  // It runs under another kernel: the guest's PID 1 is the agent, not the host's init.
  run = Exec("vm1", {"/bin/sh", "-c", "cat /proc/1/cmdline | tr '\\0' ' '"});
  EXPECT_TRUE(absl::StartsWith(run.out, "/ccsandbox-agent")) << run.out;

  // The hypervisor is inside the session's native sandbox: its own pid, net, mount and user
  // namespaces, and never host root.
  const int qemu = HypervisorNaming(state_root_);
  ASSERT_GT(qemu, 0);
  EXPECT_GT(run.pid, 0);
  for (const char* kind : {"pid", "net", "mnt", "user"}) {
    EXPECT_NE(NamespaceOf(absl::StrCat(qemu), kind), NamespaceOf("self", kind)) << kind;
  }
  EXPECT_NE(UidOf(qemu), 0) << "the hypervisor runs as host root";

  // One run at a time, said; Kill ends the run in progress with `killed`; the guest lives on.
  std::thread sleeper([&] { run = Exec("vm1", {"sleep", "100"}); });
  absl::SleepFor(absl::Seconds(2));
  GuestRun second = Exec("vm1", {"true"});
  EXPECT_EQ(second.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(second.status.error_message(), "one run at a time"))
      << second.status.error_message();
  {
    grpc::ClientContext context;
    v1::KillRequest kill;
    kill.set_session_id("vm1");
    kill.set_reason("enough");
    v1::KillResponse killed;
    ASSERT_TRUE(stub_->Kill(&context, kill, &killed).ok());
    EXPECT_EQ(killed.runs_signalled(), 1);
  }
  sleeper.join();
  EXPECT_EQ(run.killed, "stopped");
  EXPECT_TRUE(absl::StrContains(run.killed_detail, "enough")) << run.killed_detail;
  EXPECT_EQ(Exec("vm1", {"true"}).exit_code, 0);

  // Egress only through the session's proxies, which refuse everything here
  // (networkEnabled: false): a 403 and the violation in the run's own stream, before its exit.
  run = Exec("vm1", {"busybox", "wget", "-q", "-O", "-", "http://example.com/"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(run.err, "403")) << run.err;
  ASSERT_EQ(run.violations.size(), 1u) << run.err;
  EXPECT_EQ(run.violations[0], "example.com:80");

  // A timeout kills the run and says so.
  run = Exec("vm1", {"sleep", "30"}, "", 1);
  EXPECT_EQ(run.killed, "timeout");

  // Another caller's spec cannot bind the guests' files (every session's qemu sockets), not
  // the root, not one session's directory inside it, not a directory holding it.
  for (const std::string& path : {state_root_, StateDirs().front(), files_}) {
    v1::SandboxSpec spy;
    v1::SandboxBindMount* bind = spy.add_bind_mounts();
    bind->set_host_path(path);
    bind->set_guest_path(path);
    v1::SandboxHandle refused;
    const grpc::Status status = Launch("spy", &refused, spy);
    EXPECT_FALSE(status.ok()) << path;
    EXPECT_TRUE(absl::StrContains(status.error_message(), "microVM")) << status.error_message();
  }

  // Destroy powers the VM off: no hypervisor, no file.
  ASSERT_TRUE(Destroy("vm1").ok());
  EXPECT_TRUE(GoneWithin(qemu, absl::Seconds(2))) << "the hypervisor outlived Destroy";
  EXPECT_TRUE(StateDirs().empty());
}

TEST_P(MicrovmSessionTest, BindsAndDenySetsHoldInTheGuest) {
  const std::string work = daemons_->MakeWorkdir();
  const std::string docs = daemons_->MakeWorkdir();
  ASSERT_TRUE(WriteFile(docs + "/readme", "shared read-only\n"));
  ASSERT_TRUE(WriteFile(work + "/protected", "keep\n"));
  ASSERT_TRUE(WriteFile(work + "/plain", "x\n"));
  daemons_->GiveToCaller(work);
  daemons_->GiveToCaller(docs);
  v1::SandboxSpec spec;
  for (const auto& [dir, read_only] : {std::pair{work, false}, std::pair{docs, true}}) {
    v1::SandboxBindMount* bind = spec.add_bind_mounts();
    bind->set_host_path(dir);
    bind->set_guest_path(dir);
    bind->set_read_only(read_only);
  }
  spec.add_protected_paths(work + "/protected");
  v1::SandboxHandle handle;
  const grpc::Status launched = Launch("vm4", &handle, spec);
  ASSERT_TRUE(launched.ok()) << launched.error_message() << "\n" << daemons_->BrokerLog();

  // The guest's userland is the host's, read-only; the binds are where the spec says.
  GuestRun run = Exec("vm4", {"/bin/sh", "-c",
                              "cat " + docs + "/readme; echo made > " + work +
                                  "/made; touch /usr/owned 2>&1; touch " + docs +
                                  "/owned 2>&1; echo protected > " + work +
                                  "/protected 2>&1; "
                                  "rm " +
                                  work + "/protected 2>&1; true"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::cout << "guest: " << run.out << std::endl;
  EXPECT_TRUE(absl::StartsWith(run.out, "shared read-only\n")) << run.out;
  EXPECT_EQ(ReadFile(work + "/made"), "made\n");
  EXPECT_FALSE(PathExists("/usr/owned"));
  EXPECT_FALSE(PathExists(docs + "/owned"));
  EXPECT_EQ(ReadFile(work + "/protected"), "keep\n") << run.out;

  // A set-id bit set in the guest never reaches the host (the sandbox's seccomp refuses it to
  // qemu), nor does a filename the create guard denies; the denial is an event of the run.
  run = Exec("vm4", {"/bin/sh", "-c",
                     "cd " + work + " && chmod 4755 plain; echo secret > .env; ls -a; true"});
  std::cout << "guest: " << run.out << run.err << "violations: " << run.violations.size()
            << std::endl;
  struct stat st;
  ASSERT_EQ(stat((work + "/plain").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0u) << std::oct << st.st_mode;
  EXPECT_FALSE(PathExists(work + "/.env")) << run.out;
  EXPECT_FALSE(run.violations.empty()) << run.out << run.err;

  // Nothing else of the host is there: not the daemons' sockets, not another tree.
  run = Exec("vm4", {"/bin/sh", "-c",
                     "ls " + daemons_->dir() + " 2>&1; ls " + state_root_ + " 2>&1; true"});
  EXPECT_FALSE(absl::StrContains(run.out, "broker.sock")) << run.out;
  EXPECT_FALSE(absl::StrContains(run.out, "agent.sock")) << run.out;
  ASSERT_TRUE(Destroy("vm4").ok());
}

TEST_P(MicrovmSessionTest, AGuestThatPanicsPutsTheSessionInErrorWithTheCause) {
  v1::SandboxHandle handle;
  ASSERT_TRUE(Launch("vm2", &handle).ok()) << daemons_->BrokerLog();
  const int qemu = HypervisorNaming(state_root_);
  ASSERT_GT(qemu, 0);
  GuestRun run = Exec("vm2", {"/bin/sh", "-c", "echo c > /proc/sysrq-trigger; sleep 30"});
  EXPECT_EQ(run.killed, "sandbox-ended") << run.out << run.err;
  EXPECT_TRUE(GoneWithin(qemu, absl::Seconds(5)));
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (Get("vm2").state() != v1::SANDBOX_STATE_ERROR && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  const v1::SandboxHandle failed = Get("vm2");
  EXPECT_EQ(failed.state(), v1::SANDBOX_STATE_ERROR);
  EXPECT_TRUE(absl::StrContains(failed.DebugString(), "panic")) << failed.DebugString();
  GuestRun refused = Exec("vm2", {"true"});
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(Destroy("vm2").ok());
  EXPECT_TRUE(StateDirs().empty());
}

TEST_P(MicrovmSessionTest, AKilledLauncherLeavesNoHypervisor) {
  v1::SandboxHandle handle;
  ASSERT_TRUE(Launch("vm3", &handle).ok()) << daemons_->BrokerLog();
  const int qemu = HypervisorNaming(state_root_);
  ASSERT_TRUE(Alive(qemu));
  ASSERT_EQ(kill(daemons_->launcher_pid(), SIGKILL), 0);
  EXPECT_TRUE(GoneWithin(qemu, absl::Seconds(3))) << "the hypervisor outlived its launcher";
  GuestRun after = Exec("vm3", {"true"});
  EXPECT_FALSE(after.exit_code.has_value() && *after.exit_code == 0)
      << "a run succeeded in a guest whose sandbox is gone";
  ASSERT_TRUE(Destroy("vm3").ok());
  EXPECT_TRUE(StateDirs().empty());
}

// A terminal on the microvm backend: a guest of its own, the shell on the guest's PTY as typed
// at, its end relayed with the actual backend, and nothing of the guest left afterwards.
TEST_P(MicrovmSessionTest, ATerminalRunsOnThePtyOfAGuestOfItsOwn) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  auto call = stub_->Terminal(&context);
  v1::TerminalInput open;
  open.mutable_open()->set_backend("microvm");
  open.mutable_open()->add_argv("/bin/sh");
  open.mutable_open()->add_argv("-i");
  open.mutable_open()->mutable_size()->set_rows(24);
  open.mutable_open()->mutable_size()->set_cols(80);
  ASSERT_TRUE(call->Write(open));
  v1::TerminalOutput out;
  if (!call->Read(&out)) {
    const grpc::Status refused = call->Finish();
    FAIL() << "refused: " << refused.error_code() << " " << refused.error_message();
  }
  ASSERT_TRUE(out.has_opened()) << out.DebugString();
  EXPECT_EQ(out.opened().backend(), v1::SANDBOX_BACKEND_MICROVM);
  std::string screen;
  // Reads until the screen shows `want` (the call's deadline bounds it); the end, if it came.
  auto read_until = [&](const std::string& want) {
    while (screen.find(want) == std::string::npos && call->Read(&out)) {
      screen += out.data();
      if (out.has_ended()) return;
    }
  };
  v1::TerminalInput typed;
  typed.set_data("echo $((40+2)); stty size\n");
  ASSERT_TRUE(call->Write(typed));
  read_until("42\r\n24 80\r\n");
  EXPECT_NE(screen.find("42\r\n24 80\r\n"), std::string::npos) << screen;
  typed.set_data("exit 3\n");
  ASSERT_TRUE(call->Write(typed));
  read_until("never shown: the end comes first");
  ASSERT_TRUE(out.has_ended()) << screen;
  EXPECT_EQ(out.ended().backend(), v1::SANDBOX_BACKEND_MICROVM);
  EXPECT_EQ(out.ended().exit().exit_code(), 3) << out.ended().DebugString();
  call->WritesDone();
  EXPECT_TRUE(call->Finish().ok());
  EXPECT_TRUE(StateDirs().empty());
}

INSTANTIATE_TEST_SUITE_P(BrokerIdentity, MicrovmSessionTest, ::testing::Bool(), BrokerIdentityName);

}  // namespace
}  // namespace ccsandbox::testing
