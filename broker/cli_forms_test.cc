#include "broker/cli_forms.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

using Args = std::vector<std::string>;

TEST(GivenFlags, NamesSandboxctlFlagsBeforeTheDoubleDash) {
  struct Case {
    Args args;
    Args expected;
  };
  const Case cases[] = {
      {{"sandboxctl"}, {}},
      {{"sandboxctl", "--broker=unix:/b", "run", "--", "ls"}, {"broker"}},
      {{"sandboxctl", "run", "--spec=s.json", "--json", "--", "--timeout=3"}, {"spec", "json"}},
      {{"sandboxctl", "-spec", "s.json", "run"}, {"spec"}},
      {{"sandboxctl", "--spec=", "run"}, {"spec"}},  // given, even if empty
      {{"sandboxctl", "--nojson", "--nostdin", "probe"}, {"json", "stdin"}},
      {{"sandboxctl", "--no_filename_denies", "run"}, {"no_filename_denies"}},
      {{"sandboxctl", "--session=a", "--session=b", "run"}, {"session"}},
      {{"sandboxctl", "--flagfile=f", "--undefok=x", "-", "session", "ls"}, {}},
      {{"sandboxctl", "run", "--", "--spec=x"}, {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(GivenFlags(c.args), c.expected) << ::testing::PrintToString(c.args);
  }
}

TEST(CheckFormFlags, EachFormTakesItsFlagsAndRefusesTheRest) {
  struct Case {
    const char* form;
    Args given;
    const char* error;  // "" = accepted
  };
  const Case cases[] = {
      {"run --session", {"broker", "session", "workdir", "timeout", "stdin", "json"}, ""},
      {"run --session", {"session", "spec"}, "run --session: --spec cannot change an existing"},
      {"run --session", {"session", "backend"}, "--backend cannot change an existing session"},
      {"run --session",
       {"session", "no_filename_denies"},
       "--no-filename-denies cannot change an existing session"},
      {"run --session", {"session", "mode"}, "run --session: does not take --mode"},
      {"session start", {"spec", "workdir", "backend", "no_filename_denies", "json"}, ""},
      {"session start", {"timeout"}, "session start: does not take --timeout"},
      {"session start", {"session"}, "session start: does not take --session"},
      {"session ls", {"json", "broker"}, ""},
      {"session ls", {"spec"}, "session ls: does not take --spec"},
      {"session show", {"stdin"}, "session show: does not take --stdin"},
      {"session stop", {"json"}, ""},
      {"session stop", {"backend"}, "session stop: does not take --backend"},
      {"session suspend", {"spec"}, "session suspend: does not take --spec"},
      {"run", {"spec", "workdir", "timeout", "backend", "stdin", "no_filename_denies", "json"}, ""},
      {"policy check", {"mode", "json"}, ""},
      {"session frobnicate", {}, "unknown form"},
  };
  for (const Case& c : cases) {
    absl::Status status = CheckFormFlags(c.form, c.given);
    if (std::string(c.error).empty()) {
      EXPECT_TRUE(status.ok()) << c.form << ": " << status;
    } else {
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.form;
      EXPECT_NE(status.message().find(c.error), std::string::npos)
          << c.form << ": " << status.message();
    }
  }
}

TEST(CliForms, EveryFormIsListedOnceWithJson) {
  std::vector<std::string> seen;
  for (const CliForm& form : CliForms()) {
    EXPECT_EQ(std::count(seen.begin(), seen.end(), std::string(form.form)), 0) << form.form;
    seen.emplace_back(form.form);
    EXPECT_NE(std::find(form.flags.begin(), form.flags.end(), "json"), form.flags.end())
        << form.form;
  }
  EXPECT_EQ(seen.size(), 10u);
}

}  // namespace
}  // namespace ccsandbox::broker
