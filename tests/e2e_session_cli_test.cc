// `sandboxctl session` and `run --session` against the real broker and launcher: a session kept
// across commands, listed, shown and stopped; runs in it that neither launch nor destroy; usage
// errors and unknown sessions refused with exit code 125 and a clear message.
#include <signal.h>
#include <sys/wait.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "launcher/sandbox_process.h"
#include "tests/daemon_fixture.h"
#include "tests/poll_until.h"

extern char** environ;

namespace ccsandbox::testing {
namespace {

class SessionCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Daemons>> daemons = Daemons::Start();
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    d_ = *std::move(daemons);
    work_ = d_->MakeWorkdir();
    ASSERT_FALSE(work_.empty());
  }

  ProgramResult Ctl(const std::vector<std::string>& args) { return d_->Sandboxctl(args, work_); }

  // `session start` in the work tree (bound read-write): the new session's id.
  std::string Start(const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args = {"session", "start"};
    args.insert(args.end(), flags.begin(), flags.end());
    ProgramResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 0) << r.err << d_->BrokerLog();
    EXPECT_EQ(CountOf(r.out, "\n"), 1) << r.out;
    return std::string(absl::StripSuffix(r.out, "\n"));
  }

  ProgramResult RunIn(const std::string& id, const std::vector<std::string>& command) {
    std::vector<std::string> args = {"run", "--session=" + id, "--"};
    args.insert(args.end(), command.begin(), command.end());
    return Ctl(args);
  }

  // sandboxctl `args` started in the work tree, not waited for.
  std::unique_ptr<launcher::SandboxProcess> Spawn(const std::vector<std::string>& args) {
    launcher::ProcessSpec spec;
    spec.executable = Runfile("broker/sandboxctl");
    spec.argv = {spec.executable, "--broker=" + d_->broker_address()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    for (char** e = environ; *e != nullptr; ++e) spec.envp.push_back(*e);
    spec.cwd = work_;
    absl::StatusOr<std::unique_ptr<launcher::SandboxProcess>> client =
        launcher::SandboxProcess::Spawn(spec);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // Ctrl-C at the terminal: SIGINT to sandboxctl's process group. Its wait status.
  static int Interrupt(launcher::SandboxProcess& client) {
    client.SignalGroup(SIGINT);
    absl::StatusOr<int> status = client.Reap();
    EXPECT_TRUE(status.ok()) << status.status();
    return status.value_or(-1);
  }

  std::unique_ptr<Daemons> d_;
  std::string work_;
};

TEST_F(SessionCliTest, RunsShareTheSessionWhichStaysUntilStopped) {
  const std::string id = Start();
  ASSERT_TRUE(absl::StartsWith(id, "cli-")) << id;

  ProgramResult first = RunIn(id, {"sh", "-c", "echo first > note; echo wrote; exit 3"});
  EXPECT_EQ(first.exit_code, 3) << first.err;
  EXPECT_EQ(first.out, "wrote\n");
  ProgramResult second = RunIn(id, {"sh", "-c", "cat note; echo err >&2; printf '%s' \"$PWD\""});
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "first\n" + work_);  // the session's working directory
  EXPECT_EQ(second.err, "err\n");
  EXPECT_EQ(ReadFile(work_ + "/note"), "first\n");

  // Runs in a session neither launch nor destroy one.
  const std::string log = d_->BrokerLog();
  EXPECT_EQ(CountOf(log, " launched: "), 1) << log;
  EXPECT_EQ(CountOf(log, "destroyed"), 0) << log;

  ProgramResult ls = Ctl({"session", "ls"});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  std::vector<std::string> words = absl::StrSplit(ls.out, ' ', absl::SkipWhitespace());
  EXPECT_EQ(words, (std::vector<std::string>{id, "native", "warm\n"})) << ls.out;

  ProgramResult show = Ctl({"session", "show", id});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_TRUE(absl::StartsWith(show.out, "session: " + id + "\nstate: warm\nbackend: native"))
      << show.out;
  EXPECT_TRUE(absl::StrContains(show.out, "  workingDirectory: " + work_ + "\n")) << show.out;
  EXPECT_TRUE(absl::StrContains(show.out, "  egress: proxies on")) << show.out;

  ProgramResult stop = Ctl({"session", "stop", id});
  EXPECT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_EQ(stop.out, "");
  EXPECT_TRUE(absl::StrContains(d_->BrokerLog(), "session " + id + " destroyed: by request"));
  EXPECT_EQ(Ctl({"session", "ls"}).out, "");

  // A stopped session: refused, naming it, with sandboxctl's own exit code; nothing runs.
  ProgramResult after = RunIn(id, {"touch", "after"});
  EXPECT_EQ(after.exit_code, 125) << after.err;
  EXPECT_EQ(after.err, "sandboxctl: no session '" + id +
                           "': it was stopped or never started (sandboxctl session ls lists "
                           "the sessions)\n");
  EXPECT_FALSE(PathExists(work_ + "/after"));
  ProgramResult show_after = Ctl({"session", "show", id});
  EXPECT_EQ(show_after.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(show_after.err, "session show: no session '" + id + "'"))
      << show_after.err;
  EXPECT_EQ(CountOf(d_->BrokerLog(), " launched: "), 1) << d_->BrokerLog();
}

TEST_F(SessionCliTest, SessionTmpPersistsBetweenRuns) {
  const std::string id = Start();
  ProgramResult write = RunIn(id, {"sh", "-c", "echo kept > /tmp/session-note"});
  ASSERT_EQ(write.exit_code, 0) << write.err;
  ProgramResult read = RunIn(id, {"cat", "/tmp/session-note"});
  EXPECT_EQ(read.exit_code, 0) << read.err;
  EXPECT_EQ(read.out, "kept\n");
  EXPECT_FALSE(PathExists("/tmp/session-note")) << "the session's /tmp is the host's";
  EXPECT_EQ(Ctl({"session", "stop", id}).exit_code, 0);
}

TEST_F(SessionCliTest, JsonPrintsHandlesOnePerLine) {
  const std::string spec = work_ + "/spec.json";
  std::ofstream(spec)
      << R"({"sessionId": "named-1", "mode": "review", "bindMounts": [{"hostPath": ")" << work_
      << R"("}]})";
  ProgramResult start = Ctl({"session", "start", "--spec=" + spec, "--json"});
  EXPECT_EQ(start.exit_code, 0) << start.err;
  EXPECT_EQ(CountOf(start.out, "\n"), 1) << start.out;
  EXPECT_TRUE(absl::StartsWith(start.out, R"({"sessionId":"named-1")")) << start.out;
  EXPECT_TRUE(absl::StrContains(start.out, R"("state":"SANDBOX_STATE_WARM")")) << start.out;

  const std::string other = Start();
  ProgramResult ls = Ctl({"session", "ls", "--json"});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  std::vector<std::string> lines = absl::StrSplit(ls.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << ls.out;
  EXPECT_TRUE(absl::StrContains(ls.out, R"({"sessionId":"named-1")")) << ls.out;
  EXPECT_TRUE(absl::StrContains(ls.out, R"({"sessionId":")" + other + "\"")) << ls.out;

  ProgramResult show = Ctl({"session", "show", "named-1", "--json"});
  EXPECT_TRUE(absl::StrContains(show.out, R"("backend":"SANDBOX_BACKEND_NATIVE")")) << show.out;

  // The review spec binds the tree read-only, whichever run asks.
  ProgramResult write = Ctl({"run", "--session=named-1", "--json", "--", "touch", "x"});
  EXPECT_EQ(write.exit_code, 1) << write.err;
  EXPECT_TRUE(absl::StrContains(write.out, R"("violation":{"action":"file-write*")")) << write.out;
  EXPECT_TRUE(absl::StrContains(write.out, R"("sessionId":"named-1")")) << write.out;

  ProgramResult stop = Ctl({"session", "stop", "named-1", "--json"});
  EXPECT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_TRUE(absl::StrContains(stop.out, R"("state":"SANDBOX_STATE_DESTROYED")")) << stop.out;
  EXPECT_EQ(Ctl({"session", "stop", other}).exit_code, 0);
}

TEST_F(SessionCliTest, StartSaysWhenTheSessionIsWeakened) {
  ProgramResult start = Ctl({"session", "start", "--no-filename-denies"});
  EXPECT_EQ(start.exit_code, 0) << start.err;
  EXPECT_TRUE(absl::StrContains(start.err, "sandboxctl: filename-pattern denies WEAKENED"))
      << start.err;
  const std::string id(absl::StripSuffix(start.out, "\n"));
  ProgramResult env = RunIn(id, {"sh", "-c", "touch .env && echo made"});
  EXPECT_EQ(env.out, "made\n") << env.err;
  EXPECT_EQ(Ctl({"session", "stop", id}).exit_code, 0);
}

TEST_F(SessionCliTest, CtrlCCancelsTheRunAndTheSessionStays) {
  const std::string id = Start();
  // The sandboxed process's command line; sandboxctl's own spells it differently.
  const std::string marker = "sleep 4242.18";
  std::unique_ptr<launcher::SandboxProcess> client =
      Spawn({"run", "--session=" + id, "--", "sh", "-c", "exec sleep 4242.$((18))"});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30)) << d_->BrokerLog();
  EXPECT_TRUE(absl::StrContains(Ctl({"session", "show", id}).out, "state: active"));
  const int status = Interrupt(*client);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT) << status;
  EXPECT_TRUE(WaitNoProcessMatches(marker, 10));

  // Only the run ended: the session is still there and takes the next one.
  EXPECT_FALSE(absl::StrContains(d_->BrokerLog(), "destroyed")) << d_->BrokerLog();
  ProgramResult next = RunIn(id, {"echo", "still here"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(next.out, "still here\n");
  EXPECT_TRUE(absl::StrContains(Ctl({"session", "show", id}).out, "state: warm"));
  EXPECT_EQ(Ctl({"session", "stop", id}).exit_code, 0);
}

// The one-shot run shares the signal handling: Ctrl-C ends it with 128+SIGINT, and its session.
TEST_F(SessionCliTest, CtrlCEndsAOneShotRunAndItsSession) {
  const std::string marker = "sleep 4242.19";
  std::unique_ptr<launcher::SandboxProcess> client =
      Spawn({"run", "--", "sh", "-c", "exec sleep 4242.$((19))"});
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(WaitForProcessMatching(marker, 30)) << d_->BrokerLog();
  const int status = Interrupt(*client);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT) << status;
  EXPECT_TRUE(WaitNoProcessMatches(marker, 10));
  EXPECT_TRUE(PollUntil(
      [&] { return absl::StrContains(d_->BrokerLog(), "destroyed: its one-shot Exec ended"); },
      absl::Seconds(10), "the broker to destroy the one-shot session"))
      << d_->BrokerLog();
  EXPECT_EQ(Ctl({"session", "ls"}).out, "");
}

TEST_F(SessionCliTest, UsageErrorsAndUnknownSessionsAreRefusedWith125) {
  const std::string id = Start();
  const std::string spec = work_ + "/spec.json";
  std::ofstream(spec) << R"({"mode": "review"})";
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const Case cases[] = {
      {{"run", "--session=" + id, "--spec=" + spec, "--", "touch", "ran"},
       "sandboxctl: run --session: --spec cannot change an existing session"},
      {{"run", "--session=" + id, "--backend=none", "--", "touch", "ran"},
       "sandboxctl: run --session: --backend cannot change an existing session"},
      {{"run", "--session=" + id, "--no-filename-denies", "--", "touch", "ran"},
       "sandboxctl: run --session: --no-filename-denies cannot change an existing session"},
      {{"run", "--session=", "--", "touch", "ran"}, "sandboxctl: run --session: empty session id"},
      {{"run", "--session=" + id}, "sandboxctl: run: no command given"},
      {{"run", "--session=nope", "--", "touch", "ran"},
       "sandboxctl: no session 'nope': it was stopped or never started"},
      {{"session", "stop", "nope"}, "sandboxctl: session stop: no session 'nope'"},
      {{"session", "show", "nope"}, "sandboxctl: session show: no session 'nope'"},
      {{"session", "stop"}, "sandboxctl: session stop: missing session id"},
      {{"session", "ls", "--spec=" + spec}, "sandboxctl: session ls: does not take --spec"},
      {{"session", "start", "--timeout=3"}, "sandboxctl: session start: does not take --timeout"},
      {{"session", "start", "--spec=" + spec, "--workdir=" + work_},
       "sandboxctl: session start: --workdir chooses the directory bound without --spec"},
      {{"session", "kill", id}, "sandboxctl: session: unknown verb 'kill'"},
      {{"session"}, "sandboxctl: session: missing verb"},
  };
  for (const Case& c : cases) {
    ProgramResult r = Ctl(c.args);
    EXPECT_EQ(r.exit_code, 125) << c.error;
    EXPECT_TRUE(absl::StartsWith(r.err, c.error)) << c.error << " -> " << r.err;
    EXPECT_EQ(r.out, "") << c.error;
  }
  EXPECT_FALSE(PathExists(work_ + "/ran")) << "a refused run ran its command";
  // The session is untouched by all of it.
  const std::string log = d_->BrokerLog();
  EXPECT_EQ(CountOf(log, " launched: "), 1) << log;
  EXPECT_FALSE(absl::StrContains(log, "destroyed")) << log;
  EXPECT_TRUE(absl::StrContains(Ctl({"session", "show", id}).out, "state: warm"));
  EXPECT_EQ(Ctl({"session", "stop", id}).exit_code, 0);
}

// With --json: an unknown session is a JSON error (code not_found) on stderr, and a run's exit
// event says "exitCode":0 explicitly (proto3 JSON would leave a zero out).
TEST_F(SessionCliTest, JsonErrorsAndAnExplicitExitCodeZero) {
  ProgramResult missing = Ctl({"run", "--session=nope", "--json", "--", "true"});
  EXPECT_EQ(missing.exit_code, 125);
  EXPECT_EQ(missing.out, "");
  EXPECT_TRUE(absl::StartsWith(
      missing.err, R"({"error":{"code":"not_found","message":"no session 'nope': it was stopped)"))
      << missing.err;
  EXPECT_EQ(CountOf(missing.err, "\n"), 1) << missing.err;
  ProgramResult show = Ctl({"session", "show", "nope", "--json"});
  EXPECT_TRUE(
      absl::StartsWith(show.err, R"({"error":{"code":"not_found","message":"session show: )"))
      << show.err;
  ProgramResult usage = Ctl({"--json", "session", "stop"});
  EXPECT_EQ(usage.exit_code, 125);
  EXPECT_TRUE(absl::StartsWith(
      usage.err, R"({"error":{"code":"usage","message":"session stop: missing session id)"))
      << usage.err;

  const std::string id = Start();
  ProgramResult ok = Ctl({"run", "--session=" + id, "--json", "--", "true"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  std::vector<std::string> lines = absl::StrSplit(ok.out, '\n', absl::SkipEmpty());
  ASSERT_FALSE(lines.empty()) << ok.out;
  EXPECT_TRUE(absl::StrContains(lines.back(), R"("exit":{"exitCode":0)")) << lines.back();
  EXPECT_EQ(Ctl({"session", "stop", id}).exit_code, 0);
}

// Suspend freezes the session (no run meanwhile), resume thaws it; both print its handle.
TEST_F(SessionCliTest, SuspendAndResumeASession) {
  const std::string id = Start();
  ProgramResult suspended = Ctl({"session", "suspend", id});
  ASSERT_EQ(suspended.exit_code, 0) << suspended.err;
  EXPECT_TRUE(absl::StrContains(suspended.out, "SANDBOX_STATE_SUSPENDED") ||
              absl::StrContains(suspended.out, "suspended"))
      << suspended.out;
  ProgramResult refused = RunIn(id, {"echo", "never"});
  EXPECT_EQ(refused.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(refused.err, "suspended")) << refused.err;
  ProgramResult resumed = Ctl({"session", "resume", id, "--json"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(absl::StrContains(resumed.out, "SANDBOX_STATE_WARM")) << resumed.out;
  ProgramResult ran = RunIn(id, {"echo", "back"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out, "back\n");
  EXPECT_EQ(Ctl({"session", "suspend", "no-such-session"}).exit_code, 125);
}

}  // namespace
}  // namespace ccsandbox::testing
