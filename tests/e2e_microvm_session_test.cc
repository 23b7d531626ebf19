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
#include <ios>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/microvm_session_fixture.h"

namespace ccsandbox::testing {
namespace {

class MicrovmSessionTest : public MicrovmSessionFixture {};

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
  const int qemu = LaunchWithHypervisor("vm2");
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
  const int qemu = LaunchWithHypervisor("vm3");
  ASSERT_GT(qemu, 0);
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
