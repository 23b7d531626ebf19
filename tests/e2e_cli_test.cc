// sandboxctl against the real broker and launcher: output, exit codes, timeouts, the
// --sandbox=off path and bad input.
#include <signal.h>
#include <sys/wait.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "launcher/sandbox_process.h"
#include "tests/daemon_fixture.h"
#include "tests/poll_until.h"

extern char** environ;

namespace ccsandbox::testing {
namespace {

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The explicit opt-out of the filename-pattern denies.
constexpr const char* kWeaker = "--no-filename-denies";

TEST(SandboxctlRun, WritableNativeRunsFailClosedWithoutFilenameEnforcement) {
  // A launcher that cannot enforce them at creation time (here: told not to).
  auto d = MustStart({.launcher_flags = {"--create-guard=off"}});
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(absl::StrContains(d->Sandboxctl({"probe"}).out,
                                "filename-pattern denies NOT enforceable here (turned off by "
                                "--create-guard=off): writable Linux runs that need them are "
                                "refused"))
      << d->BrokerLog();
  EXPECT_TRUE(absl::StrContains(d->Sandboxctl({"probe", "--json"}).out,
                                R"("filenameDeniesEnforced":false)"));
  const std::string work = d->MakeWorkdir();
  ProgramResult r = d->Sandboxctl({"run", "--", "touch", work + "/ran"}, work);
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(r.err, "cannot forbid creating NEW files named .env")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "[launcher: turned off by --create-guard=off]")) << r.err;
  EXPECT_EQ(access((work + "/ran").c_str(), F_OK), -1);
  EXPECT_TRUE(absl::StrContains(d->BrokerLog(), "refused: writeDenyPatterns")) << d->BrokerLog();

  // Nothing writable: nothing to enforce, the run goes ahead.
  WriteFile(work + "/review.json",
            R"({"mode": "review", "bindMounts": [{"hostPath": ")" + work + R"("}]})");
  ProgramResult review =
      d->Sandboxctl({"run", "--spec=" + work + "/review.json", "--", "true"}, work);
  EXPECT_EQ(review.exit_code, 0) << review.err;

  // The explicit opt-out covers the filename patterns only: new start-up files, git metadata
  // and keys must still be refused at creation, so without the guard it is refused too.
  ProgramResult weaker = d->Sandboxctl({"run", kWeaker, "--", "touch", work + "/ran"}, work);
  EXPECT_EQ(weaker.exit_code, 125) << weaker.err;
  EXPECT_TRUE(absl::StrContains(weaker.err, "start-up files")) << weaker.err;
  EXPECT_EQ(access((work + "/ran").c_str(), F_OK), -1);
}

TEST(SandboxctlRun, TheFilenameOptOutRunsWeakenedAndSaysSo) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string work = d->MakeWorkdir();
  ProgramResult weaker = d->Sandboxctl({"run", kWeaker, "--", "bash", "-c",
                                        "touch .env && echo env-made; touch .bashrc; echo rc=$?"},
                                       work);
  EXPECT_EQ(weaker.exit_code, 0) << weaker.err;
  EXPECT_TRUE(absl::StrContains(weaker.out, "env-made")) << weaker.out << weaker.err;
  EXPECT_TRUE(absl::StrContains(weaker.out, "rc=1")) << weaker.out;  // still refused
  EXPECT_EQ(access((work + "/.bashrc").c_str(), F_OK), -1);
  EXPECT_TRUE(absl::StrContains(weaker.err, "WEAKENED by request")) << weaker.err;
  EXPECT_TRUE(absl::StrContains(d->BrokerLog(), "filename-pattern denies WEAKENED by request"))
      << d->BrokerLog();
}

TEST(SandboxctlRun, AKilledClientLeavesNoSessionBehind) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string work = d->MakeWorkdir();
  // The sandboxed process's command line; sandboxctl's own spells it differently.
  const std::string marker = "sleep 4242.17";
  launcher::ProcessSpec spec;
  spec.executable = Runfile("broker/sandboxctl");
  spec.argv = {spec.executable,          "--broker=" + d->broker_address(), "run", "--", "sh", "-c",
               "exec sleep 4242.$((17))"};
  for (char** e = environ; *e != nullptr; ++e) spec.envp.push_back(*e);
  spec.cwd = work;
  absl::StatusOr<std::unique_ptr<launcher::SandboxProcess>> client =
      launcher::SandboxProcess::Spawn(spec);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE(WaitForProcessMatching(marker, 30)) << d->BrokerLog();
  // sandboxctl is SIGKILLed mid-run: it cannot clean up, the broker must.
  (*client)->SignalGroup(SIGKILL);
  absl::StatusOr<int> status = (*client)->Reap();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) << *status;
  EXPECT_TRUE(WaitNoProcessMatches(marker, 10));
  EXPECT_TRUE(PollUntil(
      [&] { return absl::StrContains(d->BrokerLog(), "destroyed: its one-shot Exec ended"); },
      absl::Seconds(10), "the broker to destroy the one-shot session"))
      << d->BrokerLog();
  EXPECT_TRUE(absl::StrContains(d->BrokerLog(), "egress proxies stopped")) << d->BrokerLog();
}

TEST(SandboxctlRun, OutputAndExitCodeRoundTrip) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string work = d->MakeWorkdir();
  ProgramResult r = d->Sandboxctl(
      {"run", "--", "sh", "-c", "echo out; echo err >&2; printf '%s' \"$PWD\"; exit 3"}, work);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, "out\n" + work);
  EXPECT_EQ(r.err, "err\n");
}

TEST(SandboxctlRun, TheDefaultSpecBindsOnlyTheWorkdirReadWrite) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string work = d->MakeWorkdir();
  ProgramResult r =
      d->Sandboxctl({"run", "--", "sh", "-c",
                     "echo x > inside && cat inside && ls /root 2>&1; touch /usr/x 2>&1; ls " +
                         d->dir() + " 2>&1"},
                    work);
  EXPECT_TRUE(absl::StartsWith(r.out, "x\n")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "'/root': No such file")) << r.out;  // host home unseen
  EXPECT_TRUE(absl::StrContains(r.out, "'/usr/x': Read-only file system")) << r.out;
  // The launcher's socket directory is not visible either.
  EXPECT_TRUE(absl::StrContains(r.out, "'" + d->dir() + "': No such file")) << r.out;
  std::ifstream written(work + "/inside");
  EXPECT_TRUE(written.good());
}

TEST(SandboxctlRun, TimeoutIsKilledAndLeavesNothingRunning) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string marker = "1234.5671";
  ProgramResult r = d->Sandboxctl(
      {"run", "--timeout=0.5", "--", "sh", "-c", "sleep " + marker + " & sleep " + marker},
      d->MakeWorkdir());
  EXPECT_EQ(r.exit_code, 128 + 9) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "sandbox: killed (timeout: timeout after 500 ms)")) << r.err;
  EXPECT_TRUE(WaitNoProcessMatches(marker, 3));
}

// Inside the sandbox, processes that leave the run's session and process group (setsid, a
// double fork that ignores TERM and HUP) still end with the run: the sandbox's pid 1 is in the
// group the launcher kills, and its pid namespace goes with it.
TEST(SandboxctlRun, ProcessesThatLeaveTheGroupEndWithTheRun) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string escaped = "1234.5672", ignoring = "1234.5673";
  // "started" only once both are seen running inside the sandbox, so the test cannot pass
  // because they never ran.
  const std::string script = "setsid -f sleep " + escaped + "; (trap '' TERM HUP; setsid sleep " +
                             ignoring + " & ); for i in $(seq 100); do pgrep -f 'sleep " + escaped +
                             "' >/dev/null && pgrep -f "
                             "'sleep " +
                             ignoring +
                             "' >/dev/null && echo started && break; sleep 0.02; done; sleep 60";
  ProgramResult r =
      d->Sandboxctl({"run", "--timeout=2", "--", "sh", "-c", script}, d->MakeWorkdir());
  EXPECT_EQ(r.exit_code, 128 + 9) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "started")) << r.out << r.err;
  EXPECT_TRUE(WaitNoProcessMatches("sleep " + escaped, 3)) << "a setsid'd process outlived the run";
  EXPECT_TRUE(WaitNoProcessMatches("sleep " + ignoring, 3)) << "a process outlived the run";
}

TEST(SandboxctlRun, JsonPrintsOneEventPerLineInOrder) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  ProgramResult r = d->Sandboxctl({"run", "--json", "--", "echo", "hi"}, d->MakeWorkdir());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_TRUE(absl::StrContains(lines[0], "\"starting\"")) << lines[0];
  EXPECT_TRUE(absl::StrContains(lines[1], "\"ready\"")) << lines[1];
  EXPECT_TRUE(absl::StrContains(lines[2], "\"stdout\":\"aGkK\"")) << lines[2];  // base64 "hi\n"
  // The exit event: code 0, then (where limits are enforced) what the run used.
  EXPECT_TRUE(absl::StrContains(lines[3], "\"exit\":{\"exitCode\":0")) << lines[3];
  for (const std::string& line : lines) {
    EXPECT_TRUE(absl::StrContains(line, "\"backend\":\"SANDBOX_BACKEND_NATIVE\"")) << line;
  }
}

TEST(SandboxctlRun, DenialsBecomeViolationEventsAndTheOutputIsUnchanged) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string work = d->MakeWorkdir();
  ProgramResult r = d->Sandboxctl({"run", "--", "sh", "-c", "touch /etc/planted"}, work);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(
      absl::StrContains(r.err, "touch: cannot touch '/etc/planted': Read-only file system\n"))
      << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "sandbox: violation file-write* /etc/planted\n")) << r.err;
  ProgramResult json = d->Sandboxctl({"run", "--json", "--", "cat", "/etc/shadow"}, work);
  EXPECT_TRUE(
      absl::StrContains(json.out, R"("violation":{"action":"file-read*","target":"/etc/shadow")"))
      << json.out;
}

// `sandboxctl probe` of a broker with --sandbox off and no --microvm-* flag.
constexpr char kProbeSandboxOff[] =
    "agent sandbox DISABLED by --sandbox off\nmicroVM unavailable (not configured: no hypervisor "
    "(--microvm-hypervisor), guest kernel (--microvm-kernel) or image (--microvm-initrd) was "
    "given)\n";

TEST(SandboxOff, RunsWithTheNoneBackendAndSaysSo) {
  auto d = MustStart({.sandbox_flag = "off"});
  ASSERT_NE(d, nullptr);
  ProgramResult probe = d->Sandboxctl({"probe"});
  EXPECT_EQ(probe.out, kProbeSandboxOff);
  const std::string work = d->MakeWorkdir();
  ProgramResult r = d->Sandboxctl({"run", "--", "sh", "-c", "ls -d /root"}, work);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "/root\n");  // unwrapped: the host is visible
  EXPECT_TRUE(absl::StrContains(r.err, "running UNSANDBOXED")) << r.err;
  ProgramResult json = d->Sandboxctl({"run", "--json", "--", "true"}, work);
  EXPECT_TRUE(absl::StrContains(json.out, "SANDBOX_BACKEND_NONE")) << json.out;
  EXPECT_FALSE(absl::StrContains(json.out, "SANDBOX_BACKEND_NATIVE")) << json.out;
  // Exactly one boot line, the specified one.
  const std::string log = d->BrokerLog();
  // Exactly one boot line: a log line that is the status line and nothing else.
  size_t boot_lines = 0;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (absl::EndsWith(line, "daemon=broker msg=\"agent sandbox DISABLED by --sandbox off\"")) {
      ++boot_lines;
    }
  }
  EXPECT_EQ(boot_lines, 1u) << log;
  EXPECT_FALSE(absl::StrContains(log, "agent sandbox ON")) << log;
}

TEST(SandboxOff, TheEnvironmentVariableWorksAndTheFlagWins) {
  auto by_env = MustStart({.broker_env = {"CC_SERVER_SANDBOX=off"}});
  ASSERT_NE(by_env, nullptr);
  EXPECT_EQ(by_env->Sandboxctl({"probe"}).out, kProbeSandboxOff);
  auto flag_wins = MustStart({.sandbox_flag = "on", .broker_env = {"CC_SERVER_SANDBOX=off"}});
  ASSERT_NE(flag_wins, nullptr);
  const std::string json = flag_wins->Sandboxctl({"probe", "--json"}).out;
  EXPECT_TRUE(absl::StrContains(json, R"("filenameDeniesEnforced":true)")) << json;
  EXPECT_TRUE(absl::StrContains(json, "enforced at creation time")) << json;
  EXPECT_TRUE(absl::StartsWith(flag_wins->Sandboxctl({"probe"}).out,
                               "agent sandbox ON (bubblewrap — namespace isolation, no kernel "
                               "boundary); filename-pattern denies"));
}

TEST(SandboxOff, TheNoneBackendStillScrubsTheEnvironment) {
  auto d = MustStart(
      {.sandbox_flag = "off", .broker_env = {"LD_PRELOAD=/nonexistent.so", "SECRET_TOKEN=s3cr3t"}});
  ASSERT_NE(d, nullptr);
  ProgramResult r = d->Sandboxctl({"run", "--", "env"}, d->MakeWorkdir());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(absl::StrContains(r.out, "LD_PRELOAD")) << r.out;
  EXPECT_FALSE(absl::StrContains(r.out, "s3cr3t")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "PATH=")) << r.out;
}

TEST(SandboxctlRun, BadInputIsRefusedNamingTheProblemAndNothingRuns) {
  auto d = MustStart();
  ASSERT_NE(d, nullptr);
  const std::string work = d->MakeWorkdir();
  struct Case {
    const char* json;
    const char* expected;
  };
  const Case cases[] = {
      {R"({"mode": "yolo"})", "mode: unknown mode 'yolo'"},
      {R"({"bindMounts": [{"hostPath": "relative/dir"}]})", "bindMounts[0].hostPath"},
      {R"({"bindMounts": [{"hostPath": "/var/../etc"}]})", "bindMounts[0].hostPath"},
      {R"({"bindMounts": [{"hostPath": "/"}]})", "bindMounts[0].hostPath"},
      {R"({"bindMounts": [{"hostPath": "/srv", "guestPath": "/x"}]})", "bindMounts[0].guestPath"},
      {R"({"mdoe": "chat"})", "mdoe"},
      {R"({"mode": )", "not a valid SandboxSpec"},
  };
  for (const Case& c : cases) {
    const std::string spec = work + "/spec.json";
    WriteFile(spec, c.json);
    ProgramResult r = d->Sandboxctl({"run", "--spec=" + spec, "--", "touch", work + "/ran"});
    EXPECT_EQ(r.exit_code, 125) << c.json;
    EXPECT_TRUE(absl::StrContains(r.err, c.expected)) << c.json << " -> " << r.err;
  }
  std::vector<std::string> bind_socket = {"run", "--workdir=" + d->dir(), "--", "true"};
  ProgramResult socket_dir = d->Sandboxctl(bind_socket, work);
  EXPECT_EQ(socket_dir.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(socket_dir.err, "launcher's socket directory")) << socket_dir.err;

  EXPECT_EQ(access((work + "/ran").c_str(), F_OK), -1) << "a refused spec ran its command";
  EXPECT_FALSE(absl::StrContains(d->LauncherLog(), "started")) << d->LauncherLog();

  ProgramResult missing = RunProgram(
      {Runfile("broker/sandboxctl"), "--broker=unix:" + d->dir() + "/nope.sock", "probe"});
  EXPECT_EQ(missing.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(missing.err, "no broker at")) << missing.err;
  ProgramResult no_cmd = d->Sandboxctl({"run"});
  EXPECT_EQ(no_cmd.exit_code, 125);
}

TEST(SandboxctlRun, ExplicitBackendRequestsNeverDowngrade) {
  auto d = MustStart({.sandbox_flag = "off"});
  ASSERT_NE(d, nullptr);
  ProgramResult r = d->Sandboxctl({"run", "--backend=native", "--", "true"}, d->MakeWorkdir());
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(r.err, "DISABLED by --sandbox off")) << r.err;
  ProgramResult vm = d->Sandboxctl({"run", "--backend=microvm", "--", "true"}, d->MakeWorkdir());
  EXPECT_EQ(vm.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(vm.err, "microvm")) << vm.err;
}

ProgramResult SandboxctlAlone(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {Runfile("broker/sandboxctl")};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv);
}

// --help / -h at the top and on every subcommand: its complete usage lines on stdout, exit 0,
// without a broker.
TEST(SandboxctlHelp, EverySubcommandPrintsItsUsageLinesAndExitsZero) {
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> lines;
  };
  const Case cases[] = {
      {{"--help"},
       {"sandboxctl [--broker=ADDR] probe [--json]",
        "sandboxctl [--broker=ADDR] session show ID [--json]",
        "sandboxctl [--broker=ADDR] policy check --mode=MODE [--json] -- 'COMMAND LINE'"}},
      {{"-h"}, {"sandboxctl [--broker=ADDR] session ls [--json]"}},
      {{"probe", "--help"}, {"sandboxctl [--broker=ADDR] probe [--json]"}},
      {{"run", "--help"},
       {"sandboxctl [--broker=ADDR] run [--spec=FILE.json] [--workdir=DIR] [--timeout=SECONDS] "
        "[--backend=NAME] [--stdin] [--no-filename-denies] [--json] -- CMD [ARGS...]",
        "sandboxctl [--broker=ADDR] run --session=ID [--workdir=DIR] [--timeout=SECONDS] "
        "[--stdin] [--json] -- CMD [ARGS...]"}},
      {{"session", "-h"}, {"sandboxctl [--broker=ADDR] session stop ID [--json]"}},
      {{"session", "start", "--help"},
       {"sandboxctl [--broker=ADDR] session start [--spec=FILE.json] [--workdir=DIR] "
        "[--backend=NAME] [--no-filename-denies] [--json]"}},
      {{"session", "ls", "--help"}, {"sandboxctl [--broker=ADDR] session ls [--json]"}},
      {{"session", "show", "--help"}, {"sandboxctl [--broker=ADDR] session show ID [--json]"}},
      {{"session", "stop", "--help"}, {"sandboxctl [--broker=ADDR] session stop ID [--json]"}},
      {{"session", "suspend", "-h"}, {"sandboxctl [--broker=ADDR] session suspend ID [--json]"}},
      {{"session", "resume", "-h"}, {"sandboxctl [--broker=ADDR] session resume ID [--json]"}},
      {{"policy", "--help"},
       {"sandboxctl [--broker=ADDR] policy check --mode=MODE [--json] -- 'COMMAND LINE'"}},
      {{"policy", "check", "--help"},
       {"sandboxctl [--broker=ADDR] policy check --mode=MODE [--json] -- 'COMMAND LINE'"}},
  };
  for (const Case& c : cases) {
    ProgramResult r = SandboxctlAlone(c.args);
    EXPECT_EQ(r.exit_code, 0) << absl::StrJoin(c.args, " ") << r.err;
    EXPECT_EQ(r.err, "") << absl::StrJoin(c.args, " ");
    for (const std::string& line : c.lines) {
      EXPECT_TRUE(absl::StrContains(r.out, "\n  " + line + "\n"))
          << absl::StrJoin(c.args, " ") << ": " << r.out;
    }
  }
  // A subcommand's help is its own: run's does not list session's forms.
  EXPECT_FALSE(absl::StrContains(SandboxctlAlone({"run", "--help"}).out, "session ls"));
}

// Usage errors exit 125 (never 1 or 2: policy check's verdicts) with one line naming the
// problem, before any broker is asked (the broker named here does not exist).
TEST(SandboxctlUsage, ErrorsExit125WithOneLineNamingTheProblem) {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const Case cases[] = {
      {{"probe", "--frobnicate"}, "sandboxctl: probe: unknown flag '--frobnicate'"},
      {{"run", "--spec"}, "sandboxctl: run: --spec: 1 required FILE.json missing"},
      {{"frobnicate"}, "sandboxctl: unknown subcommand 'frobnicate': expected probe, run, "},
      {{}, "sandboxctl: missing subcommand: probe, run, session, policy, plan, term or doctor"},
      {{"run", "--timeout=soon", "--", "true"},
       "sandboxctl: run: --timeout: 'soon' is not a number of seconds"},
      {{"run", "--stdin=maybe", "--", "true"}, "sandboxctl: run: "},
      {{"policy", "check", "--", "ls"}, "sandboxctl: policy check: --mode is required"},
      {{"session", "show", "a", "b"}, "sandboxctl: session show: unexpected argument 'b'"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--broker=unix:/nonexistent/broker.sock"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    ProgramResult r = SandboxctlAlone(args);
    EXPECT_EQ(r.exit_code, 125) << c.error;
    EXPECT_TRUE(absl::StartsWith(r.err, c.error)) << c.error << " -> " << r.err;
    EXPECT_EQ(CountOf(r.err, "\n"), 1) << r.err;
    EXPECT_EQ(r.out, "") << c.error;
  }
}

// With --json, sandboxctl's own failures are one JSON object on stderr, usage errors included.
TEST(SandboxctlUsage, JsonErrorsAreOneObjectOnStderr) {
  ProgramResult usage = SandboxctlAlone({"session", "ls", "--json", "--spec=x.json"});
  EXPECT_EQ(usage.exit_code, 125);
  EXPECT_EQ(usage.out, "");
  EXPECT_EQ(usage.err, R"j({"error":{"code":"usage","message":"session ls: does not take --spec )j"
                       R"j((see sandboxctl session ls --help)"}})j"
                       "\n");
  ProgramResult no_broker =
      SandboxctlAlone({"--broker=/nonexistent/broker.sock", "--json", "probe"});
  EXPECT_EQ(no_broker.exit_code, 125);
  EXPECT_EQ(no_broker.err, R"j({"error":{"code":"failed","message":"no broker at )j"
                           R"j(unix:/nonexistent/broker.sock (socket missing)"}})j"
                           "\n");
  // Without --json, the same failure is a line of text.
  EXPECT_EQ(SandboxctlAlone({"--broker=/nonexistent/broker.sock", "probe"}).err,
            "sandboxctl: no broker at unix:/nonexistent/broker.sock (socket missing)\n");
}

}  // namespace
}  // namespace ccsandbox::testing
