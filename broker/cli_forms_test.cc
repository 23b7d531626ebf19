#include "broker/cli_forms.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

using Args = std::vector<std::string>;

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
       {"session", "no-filename-denies"},
       "--no-filename-denies cannot change an existing session"},
      {"run --session", {"session", "mode"}, "run --session: does not take --mode"},
      {"session start", {"spec", "workdir", "backend", "no-filename-denies", "json"}, ""},
      {"session start", {"timeout"}, "session start: does not take --timeout"},
      {"session start", {"session"}, "session start: does not take --session"},
      {"session ls", {"json", "broker"}, ""},
      {"session ls", {"spec"}, "session ls: does not take --spec"},
      {"session show", {"stdin"}, "session show: does not take --stdin"},
      {"session stop", {"json"}, ""},
      {"session stop", {"backend"}, "session stop: does not take --backend"},
      {"session suspend", {"spec"}, "session suspend: does not take --spec"},
      {"run", {"spec", "workdir", "timeout", "backend", "stdin", "no-filename-denies", "json"}, ""},
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
  EXPECT_EQ(seen.size(), 13u);
}

TEST(CliForms, EveryFlagOfAFormIsDefined) {
  for (const CliForm& form : CliForms()) {
    for (absl::string_view flag : form.flags) {
      EXPECT_NE(FindCliFlag(flag), nullptr) << form.form << ": " << flag;
    }
    for (absl::string_view flag : form.required) {
      EXPECT_NE(std::find(form.flags.begin(), form.flags.end(), flag), form.flags.end())
          << form.form << ": " << flag;
    }
  }
}

TEST(UsageLine, PathRequiredFlagsIdOptionalFlagsThenOperands) {
  auto line = [](absl::string_view name) {
    for (const CliForm& form : CliForms()) {
      if (form.form == name) return UsageLine(form);
    }
    return std::string();
  };
  EXPECT_EQ(line("run --session"),
            "sandboxctl [--broker=ADDR] run --session=ID [--workdir=DIR] [--timeout=SECONDS] "
            "[--stdin] [--json] -- CMD [ARGS...]");
  EXPECT_EQ(line("session stop"), "sandboxctl [--broker=ADDR] session stop ID [--json]");
  EXPECT_EQ(line("policy check"),
            "sandboxctl [--broker=ADDR] policy check --mode=MODE [--json] -- 'COMMAND LINE'");
  EXPECT_EQ(FormPath("run --session"), std::vector<std::string>{"run"});
  EXPECT_EQ(FormPath("session show"), (std::vector<std::string>{"session", "show"}));
}

}  // namespace
}  // namespace ccsandbox::broker
