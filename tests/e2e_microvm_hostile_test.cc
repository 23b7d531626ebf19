// A hostile workload in a microvm session, against the real daemons and real qemu (tcg): from
// inside the guest it cannot reach the agent or its virtio-serial ports, the agent's root or
// fds, the guest kernel's knobs, or the host past the session's shares (the create guard holds
// through 9p for every way of making a name); and a guest that stops answering does not hold a
// run, or the session, past the run's timeout. For the root and the unprivileged broker.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <ios>
#include <iostream>
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
#include "tests/microvm_session_fixture.h"

namespace ccsandbox::testing {
namespace {

class MicrovmHostileTest : public MicrovmSessionFixture {};

// What the workload tries from inside the guest, each line `name:what happened`.
constexpr char kProbe[] = R"sh(
echo "caps:$(grep CapEff /proc/self/status | tr -d '\t')"
echo "bnd:$(grep CapBnd /proc/self/status | tr -d '\t')"
echo "nnp:$(grep NoNewPrivs /proc/self/status | tr -d '\t')"
echo "fds:$(ls /proc/self/fd | tr '\n' ' ')"
echo "dev:$(ls /dev | tr '\n' ' ')"
echo "sys:$(ls /sys 2>&1 | head -3 | tr '\n' ' ')"
for p in /dev/vport0p0 /dev/vport0p1 /dev/vport0p2 /dev/vport1p1 /dev/hvc0 /dev/console /dev/ttyS0 /dev/mem /dev/kmem /dev/port /dev/kmsg /dev/vda; do
  [ -e "$p" ] && echo "present:$p"
done
grep -E 'virtio|vport|hvc|ttyS' /proc/devices | tr '\n' ' ' | sed 's/^/majors:/'; echo
mknod /tmp/port c 244 1 2>/dev/null && echo "mknod-char:made"
mknod /tmp/mem c 1 1 2>/dev/null && echo "mknod-mem:made"
mount -t tmpfs none /mnt 2>/dev/null && echo "mount:done"
mount -t proc none /mnt 2>/dev/null && echo "mount-proc:done"
umount /proc/sys 2>/dev/null && echo "umount:done"
mount -o remount,rw /proc/sys 2>/dev/null && echo "remount:done"
chroot / /bin/true 2>/dev/null && echo "chroot:done"
unshare -U true 2>/dev/null && echo "userns:made"
unshare -r -m true 2>/dev/null && echo "userns-mnt:made"
for pid in 1 2; do
  ls /proc/$pid/root/ >/dev/null 2>&1 && echo "procroot:$pid:$(ls /proc/$pid/root | tr '\n' ' ')"
  ls /proc/$pid/fd/ >/dev/null 2>&1 && echo "procfd:$pid:$(ls -l /proc/$pid/fd 2>&1 | tr '\n' ' ')"
  cat /proc/$pid/environ >/dev/null 2>&1 && echo "environ:$pid"
  head -c1 /proc/$pid/mem >/dev/null 2>&1 && echo "mem:$pid"
done
cat /proc/1/maps >/dev/null 2>&1 && echo "maps:1"
echo 1 > /proc/sys/kernel/printk 2>/dev/null && echo "sysctl:written"
echo 1 > /proc/sys/vm/drop_caches 2>/dev/null && echo "dropcaches:written"
busybox insmod /etc/hostname 2>&1 | sed 's/^/insmod:/'
head -c 16 /proc/kcore >/dev/null 2>&1 && echo "kcore:read"
[ -s /etc/shadow ] && cat /etc/shadow >/dev/null 2>&1 && echo "shadow:read"
kill -KILL 1 2>/dev/null; kill -TERM 1 2>/dev/null; kill -STOP 1 2>/dev/null; kill -INT 1 2>/dev/null
kill -HUP 1 2>/dev/null; kill -USR1 1 2>/dev/null; kill -CHLD 1 2>/dev/null; kill -PIPE 1 2>/dev/null
echo "agent-state:$(grep State /proc/1/status | tr -d '\t')"
echo done
)sh";

// The ways to make a name through 9p that the create guard must see, in a writable share, and
// the escapes the share must not give (each line's result on the host is checked by the test).
constexpr char kNames[] = R"sh(
cd "$1" || exit 1
echo x > a; echo x > b; echo x > c; echo x > d
mv a .env 2>/dev/null && echo "rename:done"
ln b id.pem 2>/dev/null && echo "link:done"
ln -s b server.key 2>/dev/null && echo "symlink:done"
mkfifo .env.local 2>/dev/null && echo "mkfifo:done"
mkdir -p .git/hooks 2>/dev/null && echo "mkdir-git:done"
echo evil > .git/hooks/pre-commit 2>/dev/null && echo "hook:written"
ln "$2/readme" readme-link 2>/dev/null && echo "link-ro-share:done"
mv "$2/readme" . 2>/dev/null && echo "move-out-of-ro:done"
mv c "$2/" 2>/dev/null && echo "move-into-ro:done"
ln -s / rootlink; ls rootlink/ >/dev/null 2>&1 && echo "rootlink:inside-guest"
ln -s "$3" hostlink; ls hostlink/ 2>/dev/null | grep -q broker.sock && echo "hostlink:broker-socket"
ls ../ 2>/dev/null | grep -q broker.sock && echo "dotdot:broker-socket"
touch "$(printf 'n%.0s' $(seq 255))" 2>/dev/null && echo "name255:made"
touch "$(printf 'n%.0s' $(seq 256))" 2>/dev/null && echo "name256:made"
chmod 2755 d 2>/dev/null; mkdir sgid; chmod 2775 sgid 2>/dev/null
echo done
)sh";

TEST_P(MicrovmHostileTest, AWorkloadCannotReachPastItsGuestRoot) {
  const std::string work = daemons_->MakeWorkdir();
  const std::string docs = daemons_->MakeWorkdir();
  ASSERT_TRUE(WriteFile(docs + "/readme", "shared read-only\n"));
  daemons_->GiveToCaller(work);
  daemons_->GiveToCaller(docs);
  v1::SandboxSpec spec;
  for (const auto& [dir, read_only] : {std::pair{work, false}, std::pair{docs, true}}) {
    v1::SandboxBindMount* bind = spec.add_bind_mounts();
    bind->set_host_path(dir);
    bind->set_guest_path(dir);
    bind->set_read_only(read_only);
  }
  v1::SandboxHandle handle;
  const grpc::Status launched = Launch("hostile", &handle, spec);
  ASSERT_TRUE(launched.ok()) << launched.error_message() << "\n" << daemons_->BrokerLog();

  GuestRun run = Exec("hostile", {"/bin/sh", "-c", kProbe});
  ASSERT_TRUE(absl::StrContains(run.out, "\ndone\n")) << run.out << run.err;
  // Its capabilities, every set: none of those that undo mounts, load code into the kernel,
  // make device nodes, chroot or trace (CAP_SYS_ADMIN 21, SYS_MODULE 16, SYS_RAWIO 17,
  // SYS_CHROOT 18, SYS_PTRACE 19, SYS_BOOT 22, MKNOD 27), with no_new_privs.
  for (const char* set : {"caps:CapEff:", "bnd:CapBnd:"}) {
    const size_t at = run.out.find(set);
    ASSERT_NE(at, std::string::npos) << run.out;
    uint64_t mask = 0;
    ASSERT_TRUE(absl::SimpleHexAtoi(run.out.substr(at + strlen(set), 16), &mask)) << run.out;
    for (int cap : {16, 17, 18, 19, 21, 22, 27}) {
      EXPECT_EQ(mask & (uint64_t{1} << cap), 0u) << set << " has capability " << cap;
    }
  }
  EXPECT_TRUE(absl::StrContains(run.out, "nnp:NoNewPrivs:1")) << run.out;
  // No fd of the agent's (its ports, its pipes) reaches the workload: only stdio, and ls's own.
  EXPECT_TRUE(absl::StrContains(run.out, "fds:0 1 2 3 \n")) << run.out;
  // Neither virtio-serial port (nor any way to make one, see or mount /sys, or reach the
  // agent's root, fds, environment or memory through /proc), no kernel knob, no module, no
  // namespace, no chroot; the agent shrugs off every signal and still serves the next run.
  for (const char* reached : {"present:", "mknod-", "mount:", "mount-proc:", "umount:", "remount:",
                              "chroot:", "userns", "procroot:", "environ:1", "mem:1", "maps:1",
                              "sysctl:", "dropcaches:", "kcore:", "shadow:"}) {
    EXPECT_FALSE(absl::StrContains("\n" + run.out, absl::StrCat("\n", reached)))
        << reached << " in\n"
        << run.out;
  }
  for (absl::string_view line : absl::StrSplit(run.out, '\n')) {
    if (absl::StartsWith(line, "procfd:")) EXPECT_FALSE(absl::StrContains(line, "->")) << line;
  }
  for (const char* port : {"vport", "hvc"}) EXPECT_FALSE(absl::StrContains(run.out, port));
  EXPECT_TRUE(absl::StrContains(run.out, "sys:ls: cannot access")) << run.out;
  EXPECT_TRUE(absl::StrContains(run.out,
                                "insmod:insmod: can't insert '/etc/hostname': Operation "
                                "not permitted"))
      << run.out;
  EXPECT_TRUE(absl::StrContains(run.out, "agent-state:State:S")) << run.out;

  // Every way of making a denied name through 9p is refused by the create guard under qemu (or
  // the guest's own mounts), each a violation of the run; nothing escapes the shares.
  run = Exec("hostile", {"/bin/sh", "-c", kNames, "names", work, docs, daemons_->dir()});
  ASSERT_TRUE(absl::StrContains(run.out, "\ndone\n")) << run.out << run.err;
  for (const char* made :
       {"rename:", "link:", "symlink:", "mkfifo:", "mkdir-git:", "hook:", "link-ro-share:",
        "move-out-of-ro:", "move-into-ro:", "hostlink:", "dotdot:", "name256:"}) {
    EXPECT_FALSE(absl::StrContains("\n" + run.out, absl::StrCat("\n", made))) << made << " in\n"
                                                                              << run.out;
  }
  for (const char* name : {".env", "id.pem", "server.key", ".env.local", ".git"}) {
    EXPECT_FALSE(PathExists(work + "/" + name)) << name;
  }
  EXPECT_GE(run.violations.size(), 5u) << run.out << run.err;
  EXPECT_TRUE(PathExists(docs + "/readme"));
  EXPECT_FALSE(PathExists(docs + "/c"));
  EXPECT_TRUE(absl::StrContains(run.out, "rootlink:inside-guest")) << run.out;
  struct stat st;
  for (const char* name : {"d", "sgid"}) {
    ASSERT_EQ(stat((work + "/" + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0u) << name << " " << std::oct << st.st_mode;
  }

  // A client that vanishes mid-run: its run is killed in the guest (nothing of it left there)
  // and the session serves the next run.
  {
    grpc::ClientContext context;
    v1::ExecRequest request;
    request.set_session_id("hostile");
    for (const char* arg : {"/bin/sh", "-c", "sleep 1000 & sleep 1001"}) request.add_argv(arg);
    std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader = stub_->Exec(&context, request);
    v1::SandboxEvent event;
    ASSERT_TRUE(reader->Read(&event));
    context.TryCancel();
    reader->Finish();
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  run = Exec("hostile", {"/bin/sh", "-c", "cat /proc/[0-9]*/comm"});
  while (!run.status.ok() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(200));
    run = Exec("hostile", {"/bin/sh", "-c", "cat /proc/[0-9]*/comm"});
  }
  ASSERT_TRUE(run.status.ok()) << run.status.error_message();
  EXPECT_FALSE(absl::StrContains(run.out, "sleep")) << run.out;
  EXPECT_EQ(run.exit_code, 0);

  // A spec cannot reach the guests' files through a symlink either (the caller's own, in a
  // directory it may bind).
  const std::string link = work + "/state-link";
  ASSERT_EQ(symlink(state_root_.c_str(), link.c_str()), 0);
  for (const std::string& path : {link, link + "/s"}) {
    v1::SandboxSpec spy;
    v1::SandboxBindMount* bind = spy.add_bind_mounts();
    bind->set_host_path(path);
    bind->set_guest_path(path);
    v1::SandboxHandle refused;
    const grpc::Status status = Launch("spy", &refused, spy);
    EXPECT_FALSE(status.ok()) << path;
    EXPECT_TRUE(absl::StrContains(status.error_message(), "microVM")) << status.error_message();
  }

  // A workload that starves the agent (a real-time spinner on the guest's only CPU, which the
  // capabilities it keeps allow) does not outlive its timeout.
  run = Exec("hostile", {"chrt", "-f", "99", "/bin/sh", "-c", "while :; do :; done"}, "", 2);
  std::cout << "spinner: " << run.killed << " (" << run.killed_detail << ") " << run.err
            << std::endl;
  EXPECT_EQ(run.killed, "timeout") << run.killed_detail << run.err;
  ASSERT_TRUE(Destroy("hostile").ok());
}

// A guest that stops answering (its hypervisor stopped from the host: as a guest kernel that
// hangs) does not hold the run past its timeout: the run ends `timeout`, the guest is powered
// off and the session is in error, saying it hung.
TEST_P(MicrovmHostileTest, AHungGuestEndsItsRunAtItsTimeoutAndTheSessionInError) {
  const int qemu = LaunchWithHypervisor("hung");
  ASSERT_GT(qemu, 0);
  ASSERT_EQ(Exec("hung", {"true"}).exit_code, 0);
  ASSERT_EQ(kill(qemu, SIGSTOP), 0);
  GuestRun run = Exec("hung", {"sleep", "1"}, "", 1);
  kill(qemu, SIGCONT);
  EXPECT_TRUE(run.status.ok()) << run.status.error_code() << " " << run.status.error_message();
  EXPECT_EQ(run.killed, "timeout") << run.killed_detail;
  EXPECT_TRUE(absl::StrContains(run.killed_detail, "hung")) << run.killed_detail;
  EXPECT_TRUE(GoneWithin(qemu, absl::Seconds(5))) << "a hung guest was left running";
  const v1::SandboxHandle failed = Get("hung");
  EXPECT_EQ(failed.state(), v1::SANDBOX_STATE_ERROR) << failed.DebugString();
  EXPECT_TRUE(absl::StrContains(failed.DebugString(), "hung")) << failed.DebugString();
  ASSERT_TRUE(Destroy("hung").ok());
  EXPECT_TRUE(StateDirs().empty());
}

// Destroy under a run that floods its output to a client that reads nothing: Destroy returns, the
// run's stream ends, and no hypervisor or file of the guest is left.
TEST_P(MicrovmHostileTest, DestroyEndsAFloodingRunNobodyReads) {
  const int qemu = LaunchWithHypervisor("flood");
  ASSERT_GT(qemu, 0);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::ExecRequest request;
  request.set_session_id("flood");
  for (const char* arg : {"/bin/sh", "-c", "yes flood"}) request.add_argv(arg);
  std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader = stub_->Exec(&context, request);
  v1::SandboxEvent event;
  ASSERT_TRUE(reader->Read(&event));  // started; then nothing more is read while output piles up
  absl::SleepFor(absl::Seconds(3));
  ASSERT_TRUE(Destroy("flood").ok());
  EXPECT_TRUE(GoneWithin(qemu, absl::Seconds(5))) << "the hypervisor outlived Destroy";
  EXPECT_TRUE(StateDirs().empty());
  while (reader->Read(&event)) {
  }
  EXPECT_NE(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
}

// Destroy while the guest is still booting: the Launch fails, and neither a hypervisor nor a
// file of the guest is left (nor one booted after the Destroy).
TEST_P(MicrovmHostileTest, DestroyDuringTheBootLeavesNothing) {
  v1::SandboxHandle handle;
  grpc::Status launched;
  std::thread launch([&] { launched = Launch("racing", &handle); });
  int qemu = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while ((qemu = HypervisorNaming(state_root_)) == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  const grpc::Status destroyed = Destroy("racing");
  launch.join();
  std::cout << "launch: " << launched.error_code() << " " << launched.error_message()
            << "; destroy: " << destroyed.error_code() << " " << destroyed.error_message()
            << std::endl;
  EXPECT_GT(qemu, 0);
  EXPECT_TRUE(GoneWithin(qemu, absl::Seconds(5))) << "the hypervisor outlived Destroy";
  if (!destroyed.ok()) {
    // Destroy came before the session could be destroyed: it is destroyed now.
    EXPECT_TRUE(launched.ok()) << launched.error_message();
    ASSERT_TRUE(Destroy("racing").ok());
  }
  EXPECT_EQ(HypervisorNaming(state_root_), 0);
  EXPECT_TRUE(StateDirs().empty());
}

// A broker killed with SIGKILL under a live guest: its hypervisor's call is cancelled and the
// launcher kills it; no qemu is left behind by the broker's death.
TEST_P(MicrovmHostileTest, AKilledBrokerLeavesNoHypervisor) {
  const int qemu = LaunchWithHypervisor("orphan");
  ASSERT_GT(qemu, 0);
  ASSERT_EQ(kill(daemons_->broker_pid(), SIGKILL), 0);
  EXPECT_TRUE(GoneWithin(qemu, absl::Seconds(20))) << "the hypervisor outlived its broker";
}

INSTANTIATE_TEST_SUITE_P(BrokerIdentity, MicrovmHostileTest, ::testing::Bool(), BrokerIdentityName);

// A broker that runs at most one microVM at once (--microvm-max-guests=1).
class MicrovmGuestCapTest : public MicrovmSessionFixture {
 protected:
  MicrovmGuestCapTest() { max_guests_ = 1; }
};

// A caller cannot boot guests until the host runs out of memory: beyond --microvm-max-guests a
// Launch or a microvm terminal is RESOURCE_EXHAUSTED, saying so, and leaves nothing; a
// destroyed session's place is free again.
TEST_P(MicrovmGuestCapTest, GuestsBeyondTheCapAreRefused) {
  const int qemu = LaunchWithHypervisor("first");
  ASSERT_GT(qemu, 0);
  v1::SandboxHandle handle;
  const grpc::Status refused = Launch("second", &handle);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_TRUE(absl::StrContains(refused.error_message(), "--microvm-max-guests"))
      << refused.error_message();
  EXPECT_EQ(StateDirs().size(), 1u);
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto call = stub_->Terminal(&context);
    v1::TerminalInput open;
    open.mutable_open()->set_backend("microvm");
    open.mutable_open()->add_argv("/bin/sh");
    open.mutable_open()->mutable_size()->set_rows(24);
    open.mutable_open()->mutable_size()->set_cols(80);
    ASSERT_TRUE(call->Write(open));
    v1::TerminalOutput out;
    EXPECT_FALSE(call->Read(&out) && out.has_opened()) << out.DebugString();
    call->WritesDone();
    const grpc::Status terminal = call->Finish();
    EXPECT_EQ(terminal.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << terminal.error_message();
  }
  ASSERT_TRUE(Destroy("first").ok());
  ASSERT_TRUE(GoneWithin(qemu, absl::Seconds(5)));
  EXPECT_TRUE(Launch("second", &handle).ok()) << daemons_->BrokerLog();
  ASSERT_TRUE(Destroy("second").ok());
  EXPECT_TRUE(StateDirs().empty());
}

INSTANTIATE_TEST_SUITE_P(BrokerIdentity, MicrovmGuestCapTest, ::testing::Bool(),
                         BrokerIdentityName);

// In the agent's place (a guest whose kernel is hostile owns the agent's port): finds the port
// named by its argument as the agent does, opens it as fd 3 and answers the hello and the
// setup as the agent would, before reading anything.
constexpr char kFakeAgentAnswers[] = R"sh(#!/bin/sh
while [ -z "$port" ]; do
  for d in /sys/class/virtio-ports/*; do
    [ "$(cat "$d/name" 2>/dev/null)" = "$1" ] && port=/dev/${d##*/}
  done
  [ -n "$port" ] || sleep 0.05
done
exec 3<>"$port"
printf 'h\000\000\000\021ccsandbox-agent 1k\000\000\000\000' >&3
)sh";

// A guest whose kernel is hostile owns the agent's port: here a script in the agent's place
// answers the hello and the setup as the agent would, then, once a run starts, claims a frame
// of 4 GiB. The broker's decoder fails closed on it: the run ends `killed`, the guest is powered
// off and the session is in error, and the broker serves on.
class MicrovmHostileAgentTest : public MicrovmSessionFixture {
 protected:
  MicrovmHostileAgentTest() {
    agent_script_ = absl::StrCat(kFakeAgentAnswers, R"sh(head -c 5 <&3 >/dev/null  # H
head -c 5 <&3 >/dev/null  # S's header; its payload and the run's X follow
sleep 2
printf 's\000\000\000\004\000\000\000\001o\377\377\377\377' >&3
exec sleep 1000
)sh");
  }
};

TEST_P(MicrovmHostileAgentTest, AFrameOverTheLimitEndsTheGuestNotTheBroker) {
  const int qemu = LaunchWithHypervisor("forged");
  ASSERT_GT(qemu, 0);
  GuestRun run = Exec("forged", {"true"});
  EXPECT_EQ(run.killed, "sandbox-ended") << run.out << run.err;
  EXPECT_TRUE(absl::StrContains(run.killed_detail, "over the limit")) << run.killed_detail;
  EXPECT_TRUE(GoneWithin(qemu, absl::Seconds(5))) << "the hostile guest was left running";
  const v1::SandboxHandle failed = Get("forged");
  EXPECT_EQ(failed.state(), v1::SANDBOX_STATE_ERROR) << failed.DebugString();
  EXPECT_EQ(kill(daemons_->broker_pid(), 0), 0) << "the broker died";
  ASSERT_TRUE(Destroy("forged").ok());
  EXPECT_TRUE(StateDirs().empty());
}

INSTANTIATE_TEST_SUITE_P(BrokerIdentity, MicrovmHostileAgentTest, ::testing::Bool(),
                         BrokerIdentityName);

// A hostile guest that answers a run's kill with more output, forever: the run still ends at its
// timeout (the guest powered off, the session in error), and the broker serves on.
class MicrovmFloodingAgentTest : public MicrovmSessionFixture {
 protected:
  MicrovmFloodingAgentTest() {
    agent_script_ = absl::StrCat(kFakeAgentAnswers,
                                 R"sh(head -c 10 <&3 >/dev/null  # H and S's header; then the run
printf 'o\000\001\000\000' >/tmp/frame
head -c 65536 /dev/zero >>/tmp/frame
sleep 2
printf 's\000\000\000\004\000\000\000\001' >&3
while :; do cat /tmp/frame; done >&3
)sh");
  }
};

TEST_P(MicrovmFloodingAgentTest, ARunWhoseGuestFloodsInsteadOfDyingEndsAtItsTimeout) {
  const int qemu = LaunchWithHypervisor("flooded");
  ASSERT_GT(qemu, 0);
  v1::ExecRequest request;
  request.set_session_id("flooded");
  request.add_argv("true");
  request.set_timeout_ms(3000);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(90));
  std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader = stub_->Exec(&context, request);
  v1::SandboxEvent event;
  uint64_t bytes = 0;
  std::string killed, detail;
  while (reader->Read(&event)) {
    bytes += event.stdout().size();
    if (event.has_killed()) {
      killed = event.killed().reason();
      detail = event.killed().detail();
    }
  }
  const grpc::Status status = reader->Finish();
  std::cout << "flooded with " << bytes << " bytes" << std::endl;
  EXPECT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  EXPECT_EQ(killed, "timeout") << detail;
  EXPECT_TRUE(absl::StrContains(detail, "hung")) << detail;
  EXPECT_TRUE(GoneWithin(qemu, absl::Seconds(5))) << "the hostile guest was left running";
  EXPECT_EQ(Get("flooded").state(), v1::SANDBOX_STATE_ERROR);
  ASSERT_TRUE(Destroy("flooded").ok());
  EXPECT_TRUE(StateDirs().empty());
}

INSTANTIATE_TEST_SUITE_P(BrokerIdentity, MicrovmFloodingAgentTest, ::testing::Bool(),
                         BrokerIdentityName);

}  // namespace
}  // namespace ccsandbox::testing
