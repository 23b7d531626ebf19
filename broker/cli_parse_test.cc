#include "broker/cli_parse.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

using Args = std::vector<std::string>;

constexpr char kVersion[] = "sandboxctl 9.9.9 (commit abc)\n";

std::variant<CliCommand, CliExit> Parse(const Args& args) {
  Args argv = {"sandboxctl"};
  argv.insert(argv.end(), args.begin(), args.end());
  return ParseCommandLine(argv, kVersion);
}

std::string Show(const Args& args) { return absl::StrJoin(args, " "); }

TEST(ParseCommandLine, EachFormWithItsValues) {
  struct Case {
    Args args;
    std::string form;
    Args operands;
  };
  const Case cases[] = {
      {{"probe"}, "probe", {}},
      {{"--broker=/b.sock", "probe", "--json"}, "probe", {}},
      {{"run", "--", "sh", "-c", "exit 3"}, "run", {"sh", "-c", "exit 3"}},
      {{"run", "echo", "hi"}, "run", {"echo", "hi"}},
      {{"run", "--spec=s.json", "--", "--spec=x", "--", "-h"}, "run", {"--spec=x", "--", "-h"}},
      {{"run", "--session=s1", "--", "true"}, "run --session", {"true"}},
      {{"--session", "s1", "run", "--", "true"}, "run --session", {"true"}},  // flags first
      {{"session", "start"}, "session start", {}},
      {{"session", "ls", "--json"}, "session ls", {}},
      {{"session", "show", "s1"}, "session show", {"s1"}},
      {{"session", "show", "ls"}, "session show", {"ls"}},  // an id that is a verb's name
      {{"session", "show", "run"}, "session show", {"run"}},
      {{"session", "stop", "--", "-odd"}, "session stop", {"-odd"}},
      {{"session", "suspend", "s1"}, "session suspend", {"s1"}},
      {{"session", "resume", "s1", "--json"}, "session resume", {"s1"}},
      {{"policy", "check", "--mode=plan", "--", "git commit -m x"},
       "policy check",
       {"git commit -m x"}},
      {{"plan", "--spec=s.json"}, "plan", {}},
      {{"plan", "--spec=s.json", "--platform=linux", "--", "make", "test"},
       "plan",
       {"make", "test"}},
      {{"doctor"}, "doctor", {}},
      {{"--broker=/b.sock", "doctor", "--json"}, "doctor", {}},
  };
  for (const Case& c : cases) {
    std::variant<CliCommand, CliExit> parsed = Parse(c.args);
    const CliCommand* command = std::get_if<CliCommand>(&parsed);
    ASSERT_NE(command, nullptr) << Show(c.args) << " -> " << std::get<CliExit>(parsed).error;
    EXPECT_EQ(command->form, c.form) << Show(c.args);
    EXPECT_EQ(command->operands, c.operands) << Show(c.args);
  }
}

TEST(ParseCommandLine, PlanNeedsASpecAndAPlatformItKnows) {
  auto linux = Parse({"plan", "--spec=s.json", "--platform=linux", "--json"});
  ASSERT_NE(std::get_if<CliCommand>(&linux), nullptr) << std::get<CliExit>(linux).error;
  EXPECT_EQ(std::get<CliCommand>(linux).platform, "linux");
  auto macos = Parse({"plan", "--spec=s.json", "--platform=macos"});
  ASSERT_NE(std::get_if<CliCommand>(&macos), nullptr) << std::get<CliExit>(macos).error;
  EXPECT_EQ(std::get<CliCommand>(macos).platform, "macos");
  const struct {
    Args args;
    std::string error;
  } refused[] = {
      {{"plan"}, "plan: --spec is required"},
      {{"plan", "--spec=s.json", "--platform=beos"}, "is not a platform"},
      {{"plan", "--spec=s.json", "--timeout=3"}, "plan: does not take --timeout"},
  };
  for (const auto& r : refused) {
    auto parsed = Parse(r.args);
    const CliExit* exit = std::get_if<CliExit>(&parsed);
    ASSERT_NE(exit, nullptr) << Show(r.args);
    EXPECT_EQ(exit->code, 125) << Show(r.args);
    EXPECT_TRUE(absl::StrContains(exit->error, r.error)) << Show(r.args) << ": " << exit->error;
  }
}

TEST(ParseCommandLine, FlagValuesAndSpellings) {
  auto parsed =
      Parse({"--broker=/b.sock", "run", "--spec", "s.json", "--workdir=/w", "--timeout=1.5",
             "--backend=none", "--stdin", "--no_filename_denies", "-json", "--", "true"});
  const CliCommand* c = std::get_if<CliCommand>(&parsed);
  ASSERT_NE(c, nullptr) << std::get<CliExit>(parsed).error;
  EXPECT_EQ(c->broker, "/b.sock");
  EXPECT_EQ(c->spec, "s.json");
  EXPECT_EQ(c->workdir, "/w");
  EXPECT_EQ(c->timeout_seconds, 1.5);
  EXPECT_EQ(c->backend, "none");
  EXPECT_TRUE(c->read_stdin);
  EXPECT_TRUE(c->no_filename_denies);
  EXPECT_TRUE(c->json);

  auto last = Parse({"run", "--session=a", "--session=b", "--json=false", "--", "true"});
  ASSERT_NE(std::get_if<CliCommand>(&last), nullptr) << std::get<CliExit>(last).error;
  EXPECT_EQ(std::get<CliCommand>(last).session, "b");
  EXPECT_FALSE(std::get<CliCommand>(last).json);

  auto plain = Parse({"run", "--", "true"});
  ASSERT_NE(std::get_if<CliCommand>(&plain), nullptr);
  EXPECT_EQ(std::get<CliCommand>(plain).broker, "");
  EXPECT_EQ(std::get<CliCommand>(plain).timeout_seconds, 0);
  EXPECT_FALSE(std::get<CliCommand>(plain).json);
}

TEST(ParseCommandLine, HelpAndVersionExitZero) {
  struct Case {
    Args args;
    std::vector<std::string> usage_lines;  // each printed in full
  };
  const Case cases[] = {
      {{"--help"},
       {"sandboxctl [--broker=ADDR] probe [--json]\n",
        "sandboxctl [--broker=ADDR] policy check --mode=MODE [--json] -- 'COMMAND LINE'\n"}},
      {{"-h"}, {"sandboxctl [--broker=ADDR] session ls [--json]\n"}},
      {{"probe", "--help"}, {"sandboxctl [--broker=ADDR] probe [--json]\n"}},
      {{"run", "-h"},
       {"sandboxctl [--broker=ADDR] run [--spec=FILE.json] [--workdir=DIR] [--timeout=SECONDS] "
        "[--backend=NAME] [--stdin] [--no-filename-denies] [--json] -- CMD [ARGS...]\n",
        "sandboxctl [--broker=ADDR] run --session=ID [--workdir=DIR] [--timeout=SECONDS] "
        "[--stdin] [--json] -- CMD [ARGS...]\n"}},
      {{"session", "--help"}, {"sandboxctl [--broker=ADDR] session stop ID [--json]\n"}},
      {{"session", "start", "--help"},
       {"sandboxctl [--broker=ADDR] session start [--spec=FILE.json] [--workdir=DIR] "
        "[--backend=NAME] [--no-filename-denies] [--json]\n"}},
      {{"session", "show", "--help"}, {"sandboxctl [--broker=ADDR] session show ID [--json]\n"}},
      {{"policy", "check", "--help", "--mode=x"},
       {"sandboxctl [--broker=ADDR] policy check --mode=MODE [--json] -- 'COMMAND LINE'\n"}},
  };
  for (const Case& c : cases) {
    std::variant<CliCommand, CliExit> parsed = Parse(c.args);
    const CliExit* exit = std::get_if<CliExit>(&parsed);
    ASSERT_NE(exit, nullptr) << Show(c.args);
    EXPECT_EQ(exit->code, 0) << Show(c.args) << exit->error;
    EXPECT_TRUE(absl::StartsWith(exit->out, "sandboxctl: the command-line client") ||
                absl::StartsWith(exit->out, "Usage:") || absl::StrContains(exit->out, "\nUsage:"))
        << exit->out;
    for (const std::string& line : c.usage_lines) {
      EXPECT_TRUE(absl::StrContains(exit->out, "  " + line)) << Show(c.args) << ": " << exit->out;
    }
  }
  // A subcommand's help shows its own forms only.
  const CliExit ls = std::get<CliExit>(Parse({"session", "ls", "--help"}));
  EXPECT_FALSE(absl::StrContains(ls.out, " run ")) << ls.out;
  EXPECT_TRUE(absl::StrContains(ls.out, "--json")) << ls.out;
  EXPECT_TRUE(absl::StrContains(ls.out, "--broker")) << ls.out;

  const CliExit version = std::get<CliExit>(Parse({"--version"}));
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out, kVersion);
}

TEST(ParseCommandLine, UsageErrorsExit125NamingTheProblem) {
  struct Case {
    Args args;
    const char* error;  // the start of the message
  };
  const Case cases[] = {
      {{},
       "missing subcommand: probe, run, session, policy, plan, term or doctor (see sandboxctl "
       "--help)"},
      {{"frobnicate"},
       "unknown subcommand 'frobnicate': expected probe, run, session, policy, plan, term or "
       "doctor"},
      {{"doctor", "extra"}, "doctor: unexpected argument 'extra' (it takes no arguments)"},
      {{"doctor", "--spec=s.json"}, "doctor: does not take --spec"},
      {{"--bogus", "probe"}, "probe: unknown flag '--bogus'"},
      {{"probe", "--bogus=1"}, "probe: unknown flag '--bogus=1' (see sandboxctl probe --help)"},
      {{"probe", "extra"}, "probe: unexpected argument 'extra' (it takes no arguments)"},
      {{"probe", "--", "x"}, "probe: unexpected argument 'x'"},
      {{"probe", "--spec=s"}, "probe: does not take --spec"},
      {{"run"}, "run: no command given (sandboxctl [--broker=ADDR] run "},
      {{"run", "--session=s1"}, "run: no command given (sandboxctl [--broker=ADDR] run --session"},
      {{"run", "--session=", "--", "true"}, "run --session: empty session id"},
      {{"run", "--session=s1", "--spec=x", "--", "true"},
       "run --session: --spec cannot change an existing session"},
      {{"run", "--session=s1", "--backend=none", "--", "true"},
       "run --session: --backend cannot change an existing session"},
      {{"run", "--session=s1", "--no-filename-denies", "--", "true"},
       "run --session: --no-filename-denies cannot change an existing session"},
      {{"run", "--session=s1", "--mode=plan", "--", "true"}, "run --session: does not take --mode"},
      {{"run", "--timeout=abc", "--", "true"}, "run: --timeout: 'abc' is not a number of seconds"},
      {{"run", "--spec"}, "run: --spec: 1 required FILE.json missing"},
      {{"run", "--json=maybe", "--", "true"}, "run: "},
      {{"session"}, "session: missing verb: start, ls, show, stop, suspend or resume"},
      {{"session", "kill", "s1"},
       "session: unknown verb 'kill': expected start, ls, show, stop, suspend or resume"},
      {{"session", "show"}, "session show: missing session id (sandboxctl session show ID"},
      {{"session", "stop"}, "session stop: missing session id"},
      {{"session", "stop", ""}, "session stop: empty session id"},
      {{"session", "stop", "a", "b"},
       "session stop: unexpected argument 'b' (one session id at a time)"},
      {{"session", "ls", "x"}, "session ls: unexpected argument 'x' (it takes no arguments)"},
      {{"session", "ls", "--spec=s"}, "session ls: does not take --spec"},
      {{"session", "start", "--timeout=3"}, "session start: does not take --timeout"},
      {{"session", "start", "--session=x"}, "session start: does not take --session"},
      {{"session", "start", "--", "sh"}, "session start: unexpected argument 'sh'"},
      {{"session", "start", "--"}, "session start: unexpected argument '--'"},
      {{"session", "start", "--spec=s.json", "--workdir=/w"},
       "session start: --workdir chooses the directory bound without --spec"},
      {{"session", "show", "--stdin", "s1"}, "session show: does not take --stdin"},
      {{"policy", "--mode=plan", "--", "ls"}, "policy: expected 'check', got 'ls'"},
      {{"policy"}, "policy: expected 'check'"},
      {{"policy", "check", "--", "ls"}, "policy check: --mode is required"},
      {{"policy", "check", "--mode=plan"}, "policy check: no command line given"},
      {{"policy", "check", "--mode=plan", "--", ""}, "policy check: no command line given"},
  };
  for (const Case& c : cases) {
    std::variant<CliCommand, CliExit> parsed = Parse(c.args);
    const CliExit* exit = std::get_if<CliExit>(&parsed);
    ASSERT_NE(exit, nullptr) << Show(c.args) << " was accepted as "
                             << std::get<CliCommand>(parsed).form;
    EXPECT_EQ(exit->code, 125) << Show(c.args);
    EXPECT_TRUE(absl::StartsWith(exit->error, c.error)) << Show(c.args) << " -> " << exit->error;
    EXPECT_FALSE(absl::StrContains(exit->error, "\n")) << exit->error;
    EXPECT_EQ(exit->out, "") << Show(c.args);
    EXPECT_FALSE(exit->json) << Show(c.args);
  }
}

TEST(ParseCommandLine, JsonIsSeenInUsageErrors) {
  for (const Args& args : {Args{"session", "ls", "--json", "--spec=x"}, Args{"--json", "nope"},
                           Args{"run", "-json", "--timeout"}}) {
    std::variant<CliCommand, CliExit> parsed = Parse(args);
    ASSERT_TRUE(std::holds_alternative<CliExit>(parsed)) << Show(args);
    EXPECT_EQ(std::get<CliExit>(parsed).code, 125) << Show(args);
    EXPECT_TRUE(std::get<CliExit>(parsed).json) << Show(args);
  }
  // After "--" it is the command's.
  auto parsed = Parse({"run", "--timeout=x", "--", "--json"});
  ASSERT_TRUE(std::holds_alternative<CliExit>(parsed));
  EXPECT_FALSE(std::get<CliExit>(parsed).json);
}

TEST(BrokerAddress, FlagThenEnvironmentThenTheInstalledSocket) {
  EXPECT_EQ(BrokerAddress("unix:/a.sock", "unix:/env.sock"), "unix:/a.sock");
  EXPECT_EQ(BrokerAddress("/a.sock", nullptr), "unix:/a.sock");
  EXPECT_EQ(BrokerAddress("", "/env.sock"), "unix:/env.sock");
  EXPECT_EQ(BrokerAddress("", ""), "unix:/run/ccsandbox-broker/broker.sock");
  EXPECT_EQ(BrokerAddress("", nullptr), "unix:/run/ccsandbox-broker/broker.sock");
  EXPECT_EQ(BrokerAddress("127.0.0.1:5", nullptr), "127.0.0.1:5");
}

}  // namespace
}  // namespace ccsandbox::broker
