// The sandbox boundary tried the way an attacker would, against the real daemons and bwrap,
// with the broker as root AND as an unprivileged user: never host root inside, kernel knobs
// read-only, the control plane out of reach however a path is spelled, callers inside a
// sandbox refused, sockets in bound trees hidden, and nothing the host runs or trusts
// plantable — existing or new, at any depth.
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "launcher/sandbox_process.h"
#include "proto/launcher.grpc.pb.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/daemon_fixture.h"
#include "tests/poll_until.h"

namespace ccsandbox::testing {
namespace {

bool Exists(const std::string& path) { return PathExists(path); }

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path) << content;
}

// The first process whose command line contains `marker`, as the host sees it.
struct HostProcess {
  pid_t pid = -1;
  long uid = -1;  // real uid
  long gid = -1;  // real gid
};
HostProcess FindHostProcess(const std::string& marker) {
  HostProcess found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string cmdline = ReadFile(absl::StrCat("/proc/", e->d_name, "/cmdline"));
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    if (!absl::StrContains(cmdline, marker) || absl::StrContains(cmdline, "bash -c")) continue;
    for (absl::string_view line :
         absl::StrSplit(ReadFile(absl::StrCat("/proc/", e->d_name, "/status")), '\n')) {
      if (absl::ConsumePrefix(&line, "Uid:")) {
        found.uid = std::stol(std::string(absl::StripLeadingAsciiWhitespace(line)));
      } else if (absl::ConsumePrefix(&line, "Gid:")) {
        found.gid = std::stol(std::string(absl::StripLeadingAsciiWhitespace(line)));
      }
    }
    if (found.uid >= 0 && found.gid >= 0) {
      found.pid = std::stoi(e->d_name);
      break;
    }
  }
  closedir(proc);
  return found;
}

// Runs `sleep <marker>` through `run` and looks at the sleep from the host while it runs (a
// sandboxed process is no child of the test: only /proc shows it); the look ends the sleep.
HostProcess HostViewOfASleep(const std::function<ProgramResult(const std::string&)>& run) {
  const std::string marker = absl::StrCat("2718.", getpid());
  HostProcess seen;
  ::testing::AssertionResult looked = ::testing::AssertionFailure();
  std::thread looker([&] {
    looked = PollUntil(
        [&] {
          seen = FindHostProcess("sleep " + marker);
          return seen.pid > 0;
        },
        absl::Seconds(30), "the sandboxed sleep");
    if (looked) kill(seen.pid, SIGTERM);
  });
  ProgramResult r = run("sleep " + marker + "; true");
  looker.join();
  EXPECT_TRUE(looked) << r.out << r.err;
  return seen;
}

class BoundaryTest : public ::testing::TestWithParam<bool> {
 protected:
  bool Unprivileged() const { return GetParam(); }

  void SetUp() override {
    auto daemons = Daemons::Start({.unprivileged_broker = Unprivileged()});
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    d_ = std::move(*daemons);
    work_ = d_->MakeWorkdir();  // the caller's
    ASSERT_FALSE(work_.empty());
  }

  // The uid files made by the sandbox are owned by on the host: the caller's (a root
  // caller's files stay root's through the idmapped bind).
  uid_t CallerUid() const { return Unprivileged() ? d_->broker_uid() : 0; }

  // `sandboxctl run --json` with the working tree bound writable (chat mode).
  ProgramResult Run(const std::string& script, const std::string& spec_json = "") {
    std::vector<std::string> args = {"run", "--json", "--timeout=60"};
    if (!spec_json.empty()) {
      WriteFile(work_ + ".spec.json", spec_json);
      args.push_back("--spec=" + work_ + ".spec.json");
    }
    for (const char* a : {"--", "bash", "-c"}) args.push_back(a);
    args.push_back(script);
    return d_->Sandboxctl(args, work_);
  }

  std::string BindSpec(const std::string& host_path, const std::string& extra = "") {
    return absl::StrCat(R"({"sessionId": "b1", "bindMounts": [{"hostPath": ")", host_path, R"("}])",
                        extra, "}");
  }

  void GiveToCaller(const std::string& path) { d_->GiveToCaller(path); }

  std::unique_ptr<Daemons> d_;
  std::string work_;
};

TEST_P(BoundaryTest, TheCommandIsNeverHostRootAndHoldsNoCapability) {
  // What the command sees of its own identity (the host's view: the next test).
  ProgramResult r = Run("cat /proc/self/uid_map; grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status");
  const std::string out = JsonStdout(r.out);
  EXPECT_EQ(r.exit_code, 0) << out << r.err;
  EXPECT_FALSE(absl::StrContains(out, "         0          0          1")) << out;
  // A root caller is uid 0 of a namespace that maps it to the sandbox uid. (bwrap gives an
  // unprivileged caller a second, nested namespace: its map reads "UID 0 1" there.)
  if (!Unprivileged()) {
    EXPECT_TRUE(absl::StrContains(out, "         0      65530          1")) << out;
  }
  for (const char* cap :
       {"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "CapBnd:\t0000000000000000"}) {
    EXPECT_TRUE(absl::StrContains(out, cap)) << out;
  }
}

TEST_P(BoundaryTest, TheHostUidOfARunningCommandIsUnprivileged) {
  HostProcess seen = HostViewOfASleep([&](const std::string& script) { return Run(script); });
  ASSERT_GT(seen.pid, 0);
  EXPECT_GT(seen.uid, 0) << "the sandboxed command ran as host uid " << seen.uid;
  EXPECT_EQ(seen.uid, Unprivileged() ? static_cast<long>(d_->broker_uid()) : 65530L);
}

// A root caller's commands run as the launcher's --root-sandbox-uid / --root-sandbox-gid.
TEST(RootSandboxIds, TheLaunchersFlagsPickTheHostIdsOfARootCallersCommands) {
  auto d =
      Daemons::Start({.launcher_flags = {"--root-sandbox-uid=65531", "--root-sandbox-gid=65532"}});
  ASSERT_TRUE(d.ok()) << d.status();
  const std::string work = (*d)->MakeWorkdir();
  HostProcess seen = HostViewOfASleep([&](const std::string& script) {
    return (*d)->Sandboxctl({"run", "--json", "--", "bash", "-c", script}, work);
  });
  ASSERT_GT(seen.pid, 0);
  EXPECT_EQ(seen.uid, 65531L);
  EXPECT_EQ(seen.gid, 65532L);
}

// The command holds nothing but its stdio: not the bridge's listening sockets, not the
// create guard's channel.
TEST_P(BoundaryTest, TheCommandInheritsOnlyItsStdio) {
  ProgramResult r = Run("ls /proc/self/fd | sort -n | tr '\\n' ' '");
  EXPECT_EQ(JsonStdout(r.out), "0 1 2 3 ") << JsonStdout(r.out) << r.err;  // 3: ls's own dir
}

// Every write is attempted and its status printed: the script must have run to its end.
// binfmt_misc: /proc/sys comes in as a read-only bind (recursive: a binfmt_misc the host mounts
// there comes along read-only); where the host mounts none it is an empty directory of that
// read-only /proc/sys, and mounting one inside is refused.
TEST_P(BoundaryTest, KernelTunablesAndSysrqAreReadOnly) {
  const std::string before = ReadFile("/proc/sys/kernel/core_pattern");
  const bool host_binfmt = Exists("/proc/sys/fs/binfmt_misc/register");
  ProgramResult r =
      Run("echo '|/tmp/evil' > /proc/sys/kernel/core_pattern; echo core=$?;"
          "echo 3 > /proc/sys/vm/drop_caches; echo drop=$?;"
          "echo 1 > /proc/sys/kernel/sysrq; echo sysrq=$?;"
          "echo b > /proc/sysrq-trigger; echo trigger=$?;"
          "echo binfmt-entries=$(ls -A /proc/sys/fs/binfmt_misc | wc -l);"
          "echo ':ccsx:M::ab::/tmp/evil:' > /proc/sys/fs/binfmt_misc/register; echo binfmt=$?;"
          "mount -t binfmt_misc none /proc/sys/fs/binfmt_misc; echo binfmt-mount=$?;"
          "echo 1 > /proc/sys/net/ipv4/ip_forward; echo fwd=$?;"
          "echo end");
  const std::string out = JsonStdout(r.out);
  EXPECT_EQ(r.exit_code, 0) << out << r.err;
  EXPECT_TRUE(absl::EndsWith(out, "end\n")) << out << r.err;
  for (const char* knob :
       {"core=", "drop=", "sysrq=", "trigger=", "binfmt=", "binfmt-mount=", "fwd="}) {
    EXPECT_TRUE(absl::StrContains(out, knob)) << knob << "\n" << out;
    EXPECT_FALSE(absl::StrContains(out, absl::StrCat(knob, "0\n"))) << knob << "\n" << out;
  }
  if (!host_binfmt) EXPECT_TRUE(absl::StrContains(out, "binfmt-entries=0\n")) << out;
  EXPECT_FALSE(Exists("/proc/sys/fs/binfmt_misc/ccsx"));
  EXPECT_EQ(ReadFile("/proc/sys/kernel/core_pattern"), before);
}

TEST_P(BoundaryTest, FilesMadeInBindsKeepTheCallersOwnership) {
  WriteFile(work_ + "/existing.txt", "host\n");
  GiveToCaller(work_ + "/existing.txt");
  chmod((work_ + "/existing.txt").c_str(), 0644);
  ProgramResult r =
      Run("echo new > new.txt; mkdir d; echo in > d/f; echo more >> existing.txt; ls -ln new.txt");
  EXPECT_EQ(r.exit_code, 0) << JsonStdout(r.out) << r.err;
  EXPECT_EQ(ReadFile(work_ + "/existing.txt"), "host\nmore\n");
  for (const char* name : {"/new.txt", "/d", "/d/f"}) {
    struct stat st;
    ASSERT_EQ(lstat((work_ + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_uid, CallerUid()) << name;
  }
}

// Every spelling of the control plane, refused at Launch naming the field.
TEST_P(BoundaryTest, BindsThatReachTheControlPlaneAreRefusedHoweverSpelled) {
  const std::string links = work_ + "/links";
  ASSERT_EQ(mkdir(links.c_str(), 0755), 0);
  const std::string launcher_dir = d_->dir();  // holds both sockets
  ASSERT_EQ(symlink(launcher_dir.c_str(), (links + "/sockets").c_str()), 0);
  ASSERT_EQ(symlink("/", (links + "/root").c_str()), 0);
  ASSERT_EQ(symlink("/proc/self", (links + "/self").c_str()), 0);
  ASSERT_EQ(symlink(d_->runtime_dir().c_str(), (links + "/runtime").c_str()), 0);
  ASSERT_EQ(symlink("/dev", (links + "/dev").c_str()), 0);
  struct Case {
    std::string spec;
    std::string field;
    std::string why;
  } cases[] = {
      {BindSpec(launcher_dir), "bindMounts[0].hostPath", "socket directory"},
      {BindSpec(links + "/sockets"), "bindMounts[0].hostPath", "resolves to"},
      {BindSpec(links + "/root"), "bindMounts[0].hostPath", "the whole host"},
      {BindSpec(links + "/self"), "bindMounts[0].hostPath", "/proc"},
      {BindSpec(links + "/dev"), "bindMounts[0].hostPath", "devices"},
      {BindSpec(links + "/runtime"), "bindMounts[0].hostPath", "runtime directory"},
      {BindSpec("/tmp"), "bindMounts[0].hostPath", "would expose"},  // contains them
      {BindSpec("/sys/fs"), "bindMounts[0].hostPath", "kernel objects"},
      {BindSpec(work_ + "/missing"), "bindMounts[0].hostPath", "does not exist"},
      {BindSpec(work_, R"(, "runnerStateDirs": [")" + links + R"(/sockets"])"),
       "runnerStateDirs[0]", "resolves to"},
      {BindSpec(work_, R"(, "guestWorkdir": "/etc")"), "guestWorkdir", "outside every bind"},
      {BindSpec(work_, R"(, "connectableSockets": [")" + d_->launcher_socket() + R"("])"),
       "connectableSockets[0]", "socket directory"},
      {BindSpec(work_, R"(, "denyWriteNames": ["/abs"])"), "denyWriteNames", "absolute"},
  };
  for (const Case& c : cases) {
    ProgramResult r = Run("echo RAN", c.spec);
    EXPECT_EQ(r.exit_code, 125) << c.spec << "\n" << r.out << r.err;
    EXPECT_FALSE(absl::StrContains(r.out, "RAN")) << c.spec;
    EXPECT_TRUE(absl::StrContains(r.err, c.field)) << c.spec << "\n" << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, c.why)) << c.spec << "\n" << r.err;
    EXPECT_LT(r.err.size(), 1024u) << r.err;
  }
}

// An Exec's own working directory outside every bind is refused naming the field; one inside a
// bind is where the command starts.
TEST_P(BoundaryTest, AnExecsWorkdirOutsideEveryBindIsRefused) {
  ASSERT_EQ(mkdir((work_ + "/sub").c_str(), 0777), 0);
  GiveToCaller(work_ + "/sub");
  auto stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel(d_->broker_address(), grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext ctx;
    v1::LaunchRequest launch;
    launch.mutable_spec()->set_session_id("workdir");
    launch.mutable_spec()->add_bind_mounts()->set_host_path(work_);
    v1::SandboxHandle handle;
    grpc::Status launched = stub->Launch(&ctx, launch, &handle);
    ASSERT_TRUE(launched.ok()) << launched.error_message();
  }
  auto exec = [&](const std::string& workdir, std::string* out) {
    grpc::ClientContext ctx;
    v1::ExecRequest request;
    request.set_session_id("workdir");
    request.add_argv("pwd");
    request.set_guest_workdir(workdir);
    auto reader = stub->Exec(&ctx, request);
    v1::SandboxEvent event;
    while (reader->Read(&event)) *out += event.stdout();
    return reader->Finish();
  };
  for (const std::string& outside : std::vector<std::string>{"/etc", "/var", work_ + "-sibling"}) {
    std::string out;
    grpc::Status refused = exec(outside, &out);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << outside;
    EXPECT_TRUE(absl::StartsWith(refused.error_message(), "guestWorkdir: "))
        << refused.error_message();
    EXPECT_TRUE(absl::StrContains(refused.error_message(), "outside every bind"))
        << refused.error_message();
    EXPECT_EQ(out, "") << outside;
  }
  std::string out;
  grpc::Status inside = exec(work_ + "/sub", &out);
  EXPECT_TRUE(inside.ok()) << inside.error_message();
  EXPECT_EQ(out, work_ + "/sub\n");
}

// The launcher checks the plan's workdir again, for a one-shot run against its own mounts and
// for a run in a warm sandbox against the sandbox's: a plan that bypassed the broker's check
// starts nowhere. (Root broker only: the launcher serves only the broker's uid, and the test
// calls it as root.)
TEST(LauncherChecksAgain, AWorkdirOutsideEveryBindIsRefused) {
  auto d = Daemons::Start();
  ASSERT_TRUE(d.ok()) << d.status();
  const std::string work = (*d)->MakeWorkdir();
  auto broker = v1::SandboxBroker::NewStub(
      grpc::CreateChannel((*d)->broker_address(), grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext ctx;
    v1::LaunchRequest launch;
    launch.mutable_spec()->set_session_id("again");
    launch.mutable_spec()->add_bind_mounts()->set_host_path(work);
    v1::SandboxHandle handle;
    grpc::Status launched = broker->Launch(&ctx, launch, &handle);
    ASSERT_TRUE(launched.ok()) << launched.error_message();
  }
  // "session again: sandbox <id> warm (...)"
  const std::string log = (*d)->BrokerLog();
  const std::string key = "session again: sandbox ";
  const size_t at = log.find(key);
  ASSERT_NE(at, std::string::npos) << log;
  const std::string sandbox_id =
      log.substr(at + key.size(), log.find(' ', at + key.size()) - at - key.size());
  auto launcher = v1::SandboxLauncher::NewStub(
      grpc::CreateChannel("unix:" + (*d)->launcher_socket(), grpc::InsecureChannelCredentials()));
  auto run = [&](v1::LaunchPlan plan) {
    grpc::ClientContext ctx;
    auto reader = launcher->Run(&ctx, plan);
    v1::SandboxEvent event;
    int events = 0;
    while (reader->Read(&event)) ++events;
    EXPECT_EQ(events, 0) << "a refused plan starts nothing";
    return reader->Finish();
  };
  v1::LaunchPlan one_shot;
  one_shot.set_run_id("again-1");
  one_shot.set_session_id("again");
  one_shot.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  one_shot.add_argv("pwd");
  v1::PlanMount* mount = one_shot.add_mounts();
  mount->set_host_path(work);
  mount->set_guest_path(work);
  one_shot.set_workdir("/etc");
  v1::LaunchPlan in_sandbox;
  in_sandbox.set_run_id("again-2");
  in_sandbox.set_session_id("again");
  in_sandbox.set_backend(v1::SANDBOX_BACKEND_NATIVE);
  in_sandbox.set_sandbox_id(sandbox_id);
  in_sandbox.add_argv("pwd");
  in_sandbox.set_workdir("/etc");
  for (const v1::LaunchPlan& plan : {one_shot, in_sandbox}) {
    grpc::Status refused = run(plan);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << plan.run_id();
    EXPECT_TRUE(absl::StartsWith(refused.error_message(), "workdir: '/etc' is outside every bind"))
        << plan.run_id() << ": " << refused.error_message();
  }
}

// However a caller inside a pid namespace other than ours got hold of the broker's socket,
// it is refused.
TEST_P(BoundaryTest, ACallerInANestedPidNamespaceIsRefused) {
  ProgramResult outside = d_->Sandboxctl({"probe"});
  EXPECT_EQ(outside.exit_code, 0) << outside.err;
  ProgramResult inside =
      RunProgram({"unshare", "--pid", "--fork", "--mount-proc", Runfile("broker/sandboxctl"),
                  "--broker=" + d_->broker_address(), "probe"});
  EXPECT_NE(inside.exit_code, 0) << inside.out;
  EXPECT_TRUE(absl::StrContains(inside.err, "callers inside a sandbox")) << inside.err;
  EXPECT_TRUE(absl::StrContains(d_->BrokerLog(), "nested pid namespace")) << d_->BrokerLog();
}

// The same for the launcher's socket: a caller in a nested pid namespace is refused before its
// uid is even looked at (python's gRPC calls Probe, an empty request, by name).
TEST_P(BoundaryTest, ALauncherCallerInANestedPidNamespaceIsRefused) {
  const std::string probe =
      "import sys, grpc\n"
      "call = grpc.insecure_channel(sys.argv[1]).unary_unary(\n"
      "    '/ccsandbox.v1.SandboxLauncher/Probe',\n"
      "    request_serializer=lambda m: m, response_deserializer=lambda b: b)\n"
      "try:\n"
      "    call(b'', timeout=20)\n"
      "    print('OK')\n"
      "except grpc.RpcError as e:\n"
      "    print(e.code().name, e.details())\n";
  const std::string address = "unix:" + d_->launcher_socket();
  ProgramResult outside = RunProgram({"/usr/bin/python3", "-c", probe, address});
  // As root: served by a root broker's launcher; an unprivileged broker's serves only its uid.
  EXPECT_EQ(outside.out, Unprivileged() ? "PERMISSION_DENIED this uid is not allowed to use the "
                                          "sandbox launcher\n"
                                        : "OK\n")
      << outside.err;
  ProgramResult inside = RunProgram(
      {"unshare", "--pid", "--fork", "--mount-proc", "/usr/bin/python3", "-c", probe, address});
  EXPECT_EQ(inside.out,
            "PERMISSION_DENIED callers inside a sandbox may not use the sandbox launcher (nested "
            "pid namespace)\n")
      << inside.err;
  EXPECT_TRUE(absl::StrContains(d_->LauncherLog(), "nested pid namespace")) << d_->LauncherLog();
}

TEST_P(BoundaryTest, UnixSocketsInBoundTreesAreHiddenUnlessNamed) {
  const std::string sock = work_ + "/daemon.sock";
  launcher::ProcessSpec server_spec;
  server_spec.executable = "/usr/bin/socat";
  // The reply comes from a file, one way (-U): with EXEC, socat's child could see the
  // client's half-close and the reply's end race each other, and lose the reply.
  const std::string reply = d_->MakeWorkdir() + "/reply";
  WriteFile(reply, "pong\n");
  server_spec.argv = {"socat", "-U", absl::StrCat("UNIX-LISTEN:", sock, ",fork,mode=0777"),
                      absl::StrCat("OPEN:", reply, ",rdonly")};
  server_spec.envp = {"PATH=/usr/bin:/bin"};
  // Owned: its whole process group is killed when the test ends.
  absl::StatusOr<std::unique_ptr<launcher::SandboxProcess>> server =
      launcher::SandboxProcess::Spawn(server_spec);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE(PollUntil([&] { return AcceptsConnections(sock); }, absl::Seconds(10),
                        "socat to listen on " + sock));
  ProgramResult hidden = Run("socat -u UNIX-CONNECT:daemon.sock -; echo rc=$?");
  EXPECT_FALSE(absl::StrContains(JsonStdout(hidden.out), "pong")) << JsonStdout(hidden.out);
  ProgramResult named = Run("socat -u UNIX-CONNECT:daemon.sock -",
                            BindSpec(work_, R"(, "connectableSockets": [")" + sock + R"("])"));
  EXPECT_TRUE(absl::StrContains(JsonStdout(named.out), "pong"))
      << JsonStdout(named.out) << named.out << named.err;
  // Sockets of the command's own, in its private /tmp, keep working: one process listens,
  // connects (the backlog holds the connection until accept) and talks to itself.
  ProgramResult own = Run(
      "python3 -c 'import socket\n"
      "server = socket.socket(socket.AF_UNIX); server.bind(\"/tmp/own.sock\"); server.listen()\n"
      "client = socket.socket(socket.AF_UNIX); client.connect(\"/tmp/own.sock\")\n"
      "server.accept()[0].sendall(b\"mine\"); print(client.recv(16).decode())'");
  EXPECT_TRUE(absl::StrContains(JsonStdout(own.out), "mine")) << JsonStdout(own.out) << own.err;
}

// A writable bind beneath /tmp: the command's own sockets in its private /tmp still work,
// while creations in the bind are still decided by the guard.
TEST_P(BoundaryTest, SocketsInThePrivateTmpWorkWithABindBeneathIt) {
  char tmpl[] = "/tmp/ccs-bind.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string under_tmp = tmpl;
  chmod(tmpl, 0777);
  GiveToCaller(under_tmp);
  ProgramResult r =
      Run("cd /tmp && python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); "
          "s.bind(\"/tmp/own.sock\"); s.listen(); print(\"bound\")'; touch " +
              under_tmp + "/.env; echo env=$?; echo ok > " + under_tmp + "/ok.txt",
          BindSpec(under_tmp));
  const std::string out = JsonStdout(r.out);
  EXPECT_TRUE(absl::StrContains(out, "bound")) << out << r.err << r.out;
  EXPECT_TRUE(absl::StrContains(out, "env=1")) << out;
  EXPECT_FALSE(Exists(under_tmp + "/.env"));
  EXPECT_EQ(ReadFile(under_tmp + "/ok.txt"), "ok\n");
  RunProgram({"rm", "-rf", under_tmp});
}

// Another session sharing the parent swaps a bound directory for a symlink to a tree the
// Launch never scanned (a home with keys and rc files): the next Exec of the first session
// must not bind that tree with the old, empty deny sets.
TEST_P(BoundaryTest, ABindSwappedAfterLaunchIsNotBound) {
  const std::string proj = work_ + "/proj", victim = work_ + "/victim";
  ASSERT_EQ(mkdir(proj.c_str(), 0777), 0);
  ASSERT_EQ(mkdir(victim.c_str(), 0777), 0);
  ASSERT_EQ(mkdir((victim + "/.ssh").c_str(), 0700), 0);
  WriteFile(victim + "/.ssh/id_rsa", "SECRETKEY\n");
  WriteFile(victim + "/.bashrc", "# rc\n");
  GiveToCaller(work_);
  auto stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel(d_->broker_address(), grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext ctx;
    v1::LaunchRequest launch;
    launch.mutable_spec()->set_session_id("swap-target");
    v1::SandboxBindMount* bind = launch.mutable_spec()->add_bind_mounts();
    bind->set_host_path(proj);
    v1::SandboxHandle handle;
    grpc::Status launched = stub->Launch(&ctx, launch, &handle);
    ASSERT_TRUE(launched.ok()) << launched.error_message();
  }
  auto exec = [&](std::string* out) {
    grpc::ClientContext ctx;
    v1::ExecRequest request;
    request.set_session_id("swap-target");
    for (const char* a : {"sh", "-c", "cat .ssh/id_rsa; echo pwned >> .bashrc; echo ran"}) {
      request.add_argv(a);
    }
    request.set_timeout_ms(20000);
    auto reader = stub->Exec(&ctx, request);
    v1::SandboxEvent event;
    while (reader->Read(&event)) *out += event.stdout();
    return reader->Finish();
  };
  std::string before;
  ASSERT_TRUE(exec(&before).ok());
  EXPECT_TRUE(absl::StrContains(before, "ran")) << before;
  ASSERT_EQ(rename(proj.c_str(), (proj + ".old").c_str()), 0);
  ASSERT_EQ(symlink(victim.c_str(), proj.c_str()), 0);
  // The session's sandbox bound `proj` at Launch: the swap changes nothing inside it. The run
  // works in the tree that was bound (now proj.old on the host), never in the victim's.
  std::string after;
  grpc::Status swapped = exec(&after);
  EXPECT_TRUE(swapped.ok()) << swapped.error_message();
  EXPECT_TRUE(absl::StrContains(after, "ran")) << after;
  EXPECT_FALSE(absl::StrContains(after, "SECRETKEY")) << after;
  EXPECT_EQ(ReadFile(victim + "/.bashrc"), "# rc\n");
}

// New names the host runs or trusts: refused at creation, each with a violation, nothing on
// the host. The working tree plays the user's home.
TEST_P(BoundaryTest, NothingTheHostRunsOrTrustsCanBePlanted) {
  ProgramResult made = RunProgram(
      {"bash", "-c",
       absl::StrCat("set -e; cd ", work_,
                    "; git init -q repo; rm -rf repo/.git/hooks; git init -q repo/nested;"
                    "mkdir -p stage/git; echo '[core] fsmonitor=/tmp/x' > stage/git/config;"
                    "mkdir -p wt")});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  GiveToCaller(work_);
  struct Case {
    const char* command;
    const char* planted;  // relative to the tree
  } cases[] = {
      {"echo x > .zprofile", ".zprofile"},
      {"echo x > .bash_login", ".bash_login"},
      {"echo x > .mcp.json", ".mcp.json"},
      {"mkdir -p .claude && echo '{}' > .claude/settings.json", ".claude"},
      {"mkdir repo/.git/hooks", "repo/.git/hooks"},
      {"printf '[core]\\n\\tfsmonitor = /tmp/x\\n' > .gitconfig", ".gitconfig"},
      {"mkdir -p .ssh && echo key > .ssh/authorized_keys", ".ssh"},
      {"echo /tmp/evil > repo/.git/commondir", "repo/.git/commondir"},
      {"rm -f repo/nested/.git/config; echo x > repo/nested/.git/config2;"
       "mv repo/nested/.git/config2 repo/nested/.git/config",
       "repo/nested/.git/config2"},  // config is read-only; the rename is refused
      {"echo 'gitdir: /tmp/evil' > wt/.git", "wt/.git"},
      {"mv stage .config", ".config"},     // a directory whose contents become trusted
      {"ln -s stage .config", ".config"},  // the same through a symlink
      {"mkdir -p .vscode && echo '{}' > .vscode/tasks.json", ".vscode"},
      {"echo 'curl evil' > .envrc", ".envrc"},
      {"mkdir -p .local/bin && echo x > .local/bin/ls", ".local/bin"},
      {"mkdir -p .config/autostart && echo x > .config/autostart/x.desktop", ".config/autostart"},
      {"mkdir -p .config/systemd/user && echo x > .config/systemd/user/x.service",
       ".config/systemd/user"},
      {"echo x > linksrc && ln linksrc .bashrc", ".bashrc"},
  };
  for (const Case& c : cases) {
    ProgramResult r = Run(c.command);
    const std::string planted = absl::StrCat(work_, "/", c.planted);
    EXPECT_TRUE(absl::StrContains(r.out, "\"file-write-create\"")) << c.command << "\n" << r.out;
    if (std::string(c.planted) == "repo/nested/.git/config2") {
      EXPECT_FALSE(absl::StrContains(ReadFile(work_ + "/repo/nested/.git/config"), "x\n"));
      continue;
    }
    EXPECT_FALSE(Exists(planted)) << c.command;
  }
  EXPECT_FALSE(Exists(work_ + "/.config/git/config"));
  // What an ordinary command does next to them still works.
  ProgramResult ok = Run("echo fine > notes.txt && mkdir -p src/lib && echo y > src/lib/a.c");
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_EQ(ReadFile(work_ + "/src/lib/a.c"), "y\n");
}

// A read-only bind inside a writable repository's .git: the pin that keeps .git/hooks in place
// binds .git again, and must not leave the nested read-only bind hidden under a writable copy —
// however the bind is spelled (through a symlink too), and however the agent moves things.
TEST_P(BoundaryTest, AReadOnlyBindNestedUnderAPinnedDirectoryStaysReadOnly) {
  ProgramResult made =
      RunProgram({"bash", "-c",
                  absl::StrCat("set -e; cd ", work_,
                               "; git init -q repo; mkdir -p repo/.git/vendor; echo orig > "
                               "repo/.git/vendor/f; ln -s repo/.git/vendor vlink")});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  GiveToCaller(work_);
  for (const std::string& spelled : {work_ + "/repo/.git/vendor", work_ + "/vlink"}) {
    const std::string spec =
        absl::StrCat(R"({"sessionId": "b1", "bindMounts": [{"hostPath": ")", work_,
                     R"("}, {"hostPath": ")", spelled, R"(", "readOnly": true}]})");
    // Written to, added to, replaced by a rename of its parent, moved away (across mounts mv
    // copies and then fails to remove the original).
    ProgramResult r =
        Run("echo x > repo/.git/vendor/f; echo y > repo/.git/vendor/new;"
            " echo z > repo/.git/hooks/pre-commit; mv repo/.git repo/.git2;"
            " mv repo/.git/vendor moved; echo done",
            spec);
    EXPECT_EQ(JsonStdout(r.out), "done\n") << spelled << "\n" << r.out << r.err;
    EXPECT_EQ(ReadFile(work_ + "/repo/.git/vendor/f"), "orig\n") << spelled << "\n" << r.out;
    EXPECT_FALSE(Exists(work_ + "/repo/.git/vendor/new")) << spelled;
    EXPECT_FALSE(Exists(work_ + "/repo/.git/hooks/pre-commit")) << spelled;
    EXPECT_FALSE(Exists(work_ + "/repo/.git2")) << spelled;
    RunProgram({"rm", "-rf", work_ + "/moved"});
  }
}

// Red-team findings: a bare-repository-shaped directory, a protected path that does not exist
// yet, and the launcher's own programs.
TEST_P(BoundaryTest, BareRepositoriesMissingProtectedPathsAndTheLaunchersProgramsAreOutOfReach) {
  ProgramResult made = RunProgram({"bash", "-c", absl::StrCat("cd ", work_, "; git init -q .")});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  GiveToCaller(work_);
  ProgramResult bare = Run(
      "mkdir -p src/objects src/refs/heads; echo 'ref: refs/heads/main' > src/HEAD; echo head=$?;"
      "printf '[core]\\n\\tfsmonitor = touch /var/tmp/pwned\\n' > src/config;"
      "mkdir -p m.git; echo x > m.git/config; echo baregit=$?");
  const std::string out = JsonStdout(bare.out);
  EXPECT_TRUE(absl::StrContains(out, "head=1")) << out << bare.err;
  EXPECT_TRUE(absl::StrContains(out, "baregit=1")) << out;
  EXPECT_FALSE(Exists(work_ + "/src/HEAD"));
  EXPECT_FALSE(Exists(work_ + "/m.git/config"));
  ProgramResult missing =
      Run("mkdir notyet; echo mkdir=$?; echo x > deploy.sh; echo file=$?",
          BindSpec(work_, absl::StrCat(R"(, "protectedPaths": [")", work_, R"(/notyet", ")", work_,
                                       R"(/deploy.sh"])")));
  const std::string missing_out = JsonStdout(missing.out);
  EXPECT_TRUE(absl::StrContains(missing_out, "mkdir=1")) << missing_out << missing.err;
  EXPECT_TRUE(absl::StrContains(missing_out, "file=1")) << missing_out;
  EXPECT_FALSE(Exists(work_ + "/notyet"));
  EXPECT_FALSE(Exists(work_ + "/deploy.sh"));
  char shim[PATH_MAX];
  ASSERT_NE(realpath(Runfile("launcher/sandbox_shim").c_str(), shim), nullptr);
  const std::string shim_dir = std::string(shim).substr(0, std::string(shim).rfind('/'));
  ProgramResult own = Run("echo RAN", BindSpec(shim_dir));
  EXPECT_EQ(own.exit_code, 125) << own.out << own.err;
  EXPECT_FALSE(absl::StrContains(own.out, "UkFO")) << own.out;  // "RAN"
  // An unprivileged broker may not even be able to resolve a build tree under /root.
  EXPECT_TRUE(absl::StrContains(own.err, "launcher's own programs") ||
              (Unprivileged() && absl::StrContains(own.err, "cannot be resolved")))
      << own.err;
}

// Second red-team pass: what git configs name, wherever the config lives.
TEST_P(BoundaryTest, WhatGitConfigsNameIsOutOfReach) {
  ProgramResult made = RunProgram(
      {"bash", "-c",
       absl::StrCat("set -e; cd ", work_, "; git init -q r; cd r;",
                    "git config core.hooksPath .githooks;",  // missing at Launch
                    "git config include.path ../inc1.cfg;",
                    "printf '[include]\\n\\tpath = inc2.cfg\\n' > .git/../inc1.cfg;",
                    "printf '[core]\\n\\tpager = less\\n' > inc2.cfg;",  // level two
                    "git config filter.x.clean ./tools/clean.sh; mkdir -p tools scripts sub/hooks;",
                    "echo 'cat' > tools/clean.sh; echo '#!/bin/sh' > scripts/pre-commit;",
                    "ln -s ../../scripts/pre-commit .git/hooks/pre-commit;",  // hook symlinked out
                    "echo '#!/bin/sh' > sub/hooks/post-commit")});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  GiveToCaller(work_);
  ProgramResult r =
      Run("cd r; mkdir .githooks; echo mk=$?; echo x >> inc2.cfg; echo inc2=$?;"
          "echo x >> tools/clean.sh; echo filter=$?; echo x >> scripts/pre-commit; echo link=$?");
  const std::string out = JsonStdout(r.out);
  for (const char* refused : {"mk=1", "inc2=1", "filter=1", "link=1"}) {
    EXPECT_TRUE(absl::StrContains(out, refused)) << refused << "\n" << out << r.err;
  }
  EXPECT_FALSE(Exists(work_ + "/r/.githooks"));
  // Only a subdirectory of the repository is bound: its config still applies to it.
  ProgramResult conf = RunProgram({"git", "-c", "safe.directory=*", "-C", work_ + "/r", "config",
                                   "core.hooksPath", "sub/hooks"});
  ASSERT_EQ(conf.exit_code, 0) << conf.err;
  ProgramResult sub =
      Run("echo x >> hooks/post-commit; echo enclosed=$?", BindSpec(work_ + "/r/sub"));
  EXPECT_TRUE(absl::StrContains(JsonStdout(sub.out), "enclosed=1")) << JsonStdout(sub.out);
}

// A protected file's other name (a hard link made before Launch) writes the same content.
TEST_P(BoundaryTest, AHardLinkToAProtectedFileIsReadOnlyToo) {
  WriteFile(work_ + "/.bashrc", "# rc\n");
  ASSERT_EQ(link((work_ + "/.bashrc").c_str(), (work_ + "/notes.txt").c_str()), 0);
  GiveToCaller(work_);
  ProgramResult r = Run("echo pwned >> notes.txt; echo rc=$?");
  EXPECT_TRUE(absl::StrContains(JsonStdout(r.out), "rc=1")) << JsonStdout(r.out) << r.err;
  EXPECT_EQ(ReadFile(work_ + "/.bashrc"), "# rc\n");
}

// Third red-team pass: a git directory elsewhere in the bind (git init --separate-git-dir),
// a FIFO where a config is expected, a tree too deep to scan.
TEST_P(BoundaryTest, SeparateGitDirsFifosAndDeepTrees) {
  ProgramResult made = RunProgram(
      {"bash", "-c",
       absl::StrCat("set -e; cd ", work_, "; git init -q --separate-git-dir=", work_, "/sep/gd ",
                    work_, "/sep/wt;", "mkfifo ff; git init -q fifo; mkdir -p fifo/.git/x.git;",
                    "echo 'ref: refs/heads/main' > fifo/.git/x.git/HEAD;",
                    "printf '[include]\\n\\tpath = ", work_, "/ff\\n' > fifo/.git/x.git/config")});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  GiveToCaller(work_);
  const auto start = std::chrono::steady_clock::now();
  ProgramResult r =
      Run("printf '[core]\\n\\tfsmonitor = /tmp/x.sh\\n' >> sep/gd/config; echo config=$?;"
          "echo x > sep/gd/hooks/post-checkout; echo hook=$?");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));  // no hang
  const std::string out = JsonStdout(r.out);
  EXPECT_TRUE(absl::StrContains(out, "config=1")) << out << r.err;
  EXPECT_TRUE(absl::StrContains(out, "hook=1")) << out;
  EXPECT_FALSE(Exists(work_ + "/sep/gd/hooks/post-checkout"));
  // 300 levels: refused at Launch, not scanned for minutes.
  std::string deep = work_ + "/deep";
  for (int i = 0; i < 300; ++i) deep += "/d";
  ASSERT_EQ(RunProgram({"mkdir", "-p", deep}).exit_code, 0);
  ProgramResult refused = Run("echo RAN");
  EXPECT_EQ(refused.exit_code, 125) << refused.out;
  EXPECT_TRUE(absl::StrContains(refused.err, "levels deep")) << refused.err;
}

// What exists at Launch is read-only wherever it is, and a protected path with glob
// characters in its name protects the literal directory.
TEST_P(BoundaryTest, ExistingTrustedNamesAreReadOnlyAtAnyDepth) {
  ProgramResult made = RunProgram(
      {"bash", "-c",
       absl::StrCat("set -e; cd ", work_,
                    "; mkdir -p deep/er/.config/git deep/.local/bin 'co*py' proj/.config/gh;"
                    "echo a > deep/er/.config/git/config; echo b > deep/.local/bin/tool;"
                    "echo c > 'co*py/file'; echo token > proj/.config/gh/hosts.yml;"
                    "git init -q repo; cd repo; git -c user.email=a@b -c user.name=a commit -q "
                    "--allow-empty -m x; git worktree add -q ../linked 2>/dev/null;"
                    "echo d > .git/config.worktree;"
                    "git config core.hooksPath .husky/_; mkdir -p .husky/_;"
                    "printf '#!/bin/sh\\n' > .husky/_/pre-commit")});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  GiveToCaller(work_);
  ProgramResult r =
      Run("echo x >> deep/er/.config/git/config; echo git=$?;"
          "echo x >> deep/.local/bin/tool; echo bin=$?;"
          "echo x >> 'co*py/file'; echo glob=$?;"
          "echo x >> repo/.git/config.worktree; echo wt=$?;"
          "echo 'gitdir: /tmp/evil' > linked/.git; echo pointer=$?;"
          "cat proj/.config/gh/hosts.yml; echo gh=$?;"
          "echo 'touch /var/tmp/pwned' >> repo/.husky/_/pre-commit; echo husky=$?",
          BindSpec(work_, absl::StrCat(R"(, "protectedPaths": [")", work_, R"(/co*py"])")));
  const std::string out = JsonStdout(r.out);
  for (const char* refused : {"git=1", "bin=1", "glob=1", "wt=1", "pointer=1", "gh=1"}) {
    EXPECT_TRUE(absl::StrContains(out, refused)) << refused << "\n" << out << r.err;
  }
  EXPECT_FALSE(absl::StrContains(out, "token")) << out;
  EXPECT_TRUE(absl::StrContains(out, "husky=1")) << out;
  EXPECT_EQ(ReadFile(work_ + "/repo/.husky/_/pre-commit"), "#!/bin/sh\n");
  EXPECT_EQ(ReadFile(work_ + "/deep/er/.config/git/config"), "a\n");
  EXPECT_EQ(ReadFile(work_ + "/co*py/file"), "c\n");
}

// A protected path with glob characters in its name that does not exist at Launch: its literal
// name cannot be created, by any route; nor can a NEW match of the glob.
TEST_P(BoundaryTest, AMissingProtectedPathWithGlobCharactersCannotBeCreated) {
  ASSERT_EQ(mkdir((work_ + "/stage").c_str(), 0777), 0);
  GiveToCaller(work_ + "/stage");
  ProgramResult r =
      Run("mkdir 'co*py'; echo mkdir=$?; echo x > 'co*py'; echo file=$?;"
          "mv stage 'co*py'; echo mv=$?; ln -s stage 'co*py'; echo symlink=$?;"
          "mkdir copy; echo match=$?; mkdir cox; echo other=$?",
          BindSpec(work_, absl::StrCat(R"(, "protectedPaths": [")", work_, R"(/co*py"])")));
  const std::string out = JsonStdout(r.out);
  EXPECT_EQ(out, "mkdir=1\nfile=1\nmv=1\nsymlink=1\nmatch=1\nother=0\n") << r.out << r.err;
  EXPECT_FALSE(Exists(work_ + "/copy")) << "a new match of the glob";
  EXPECT_FALSE(Exists(work_ + "/co*py"));
  EXPECT_TRUE(Exists(work_ + "/stage"));
  EXPECT_EQ(CountOf(r.out, absl::StrCat(R"("target":")", work_, "/co*py\"")), 4) << r.out;
  EXPECT_EQ(CountOf(r.out, absl::StrCat(R"("target":")", work_, "/copy\"")), 1) << r.out;
}

// A mount inside a bound tree (here a bind of the daemons' socket directory) does not come
// along: the sandbox sees the directory beneath it.
TEST(Submounts, AMountInsideABoundTreeIsNotCarriedIn) {
  auto d = Daemons::Start();
  ASSERT_TRUE(d.ok()) << d.status();
  const std::string work = (*d)->MakeWorkdir();
  ASSERT_EQ(mkdir((work + "/sub").c_str(), 0755), 0);
  ASSERT_EQ(RunProgram({"mount", "--bind", (*d)->dir(), work + "/sub"}).exit_code, 0);
  ProgramResult r = (*d)->Sandboxctl(
      {"run", "--json", "--", "sh", "-c",
       "echo x > sub/planted; socat -u UNIX-CONNECT:sub/launcher.sock - </dev/null; "
       "echo connect=$?"},
      work);
  RunProgram({"umount", work + "/sub"});
  EXPECT_FALSE(PathExists((*d)->dir() + "/planted"));
  EXPECT_FALSE(absl::StrContains(JsonStdout(r.out), "connect=0")) << JsonStdout(r.out);
  EXPECT_TRUE(absl::StrContains(JsonStdout(r.out), "connect=")) << r.out << r.err;
}

// A sandbox that fails to start says so, with bwrap's own words (at Launch: the session's
// sandbox starts there), and is not reported as the create guard's death.
class SandboxStart : public ::testing::TestWithParam<bool> {};

TEST_P(SandboxStart, ABwrapFailureIsReportedAsSuch) {
  char tmpl[] = "/var/tmp/ccs-fakebwrap.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string fake = std::string(tmpl) + "/bwrap";
  WriteFile(fake,
            "#!/bin/sh\necho 'bwrap: Can'\\''t mount proc on /newroot/proc: Operation not "
            "permitted' >&2\nexit 1\n");
  chmod(fake.c_str(), 0755);
  chmod(tmpl, 0755);
  auto d =
      Daemons::Start({.launcher_flags = {"--bwrap=" + fake}, .unprivileged_broker = GetParam()});
  ASSERT_TRUE(d.ok()) << d.status();
  const std::string work = (*d)->MakeWorkdir();
  ProgramResult r = (*d)->Sandboxctl({"run", "--json", "--", "touch", "ran"}, work);
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out + r.err, "the sandbox did not start")) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out + r.err, "Can't mount proc")) << r.out << r.err;
  EXPECT_FALSE(absl::StrContains(r.out + r.err, "supervisor died")) << r.out << r.err;
  EXPECT_FALSE(PathExists(work + "/ran"));
  RunProgram({"rm", "-rf", tmpl});
}

INSTANTIATE_TEST_SUITE_P(Brokers, BoundaryTest, ::testing::Bool(), BrokerIdentityName);
INSTANTIATE_TEST_SUITE_P(Brokers, SandboxStart, ::testing::Bool(), BrokerIdentityName);

}  // namespace
}  // namespace ccsandbox::testing
