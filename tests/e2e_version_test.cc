// Every binary answers --version with its name, the release and the commit, and exits 0.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/version.h"
#include "gtest/gtest.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {
namespace {

TEST(Version, EveryBinaryPrintsReleaseAndCommit) {
  for (const std::string binary :
       {"broker/sandbox_brokerd", "broker/sandboxctl", "launcher/sandbox_launcherd"}) {
    ProgramResult r = RunProgram({Runfile(binary), "--version"});
    EXPECT_EQ(r.exit_code, 0) << binary << r.err;
    const std::string name = binary.substr(binary.find('/') + 1);
    EXPECT_TRUE(absl::StartsWith(r.out, absl::StrCat(name, " ", kVersion, " (commit ")))
        << binary << ": " << r.out;
    EXPECT_FALSE(absl::StrContains(r.out, "(commit )")) << r.out;
  }
}

// docs/flags.md lists every flag each daemon defines (what --helpfull prints outside Abseil's own).
TEST(FlagReference, ListsEveryFlagOfEveryDaemon) {
  const std::string doc = ReadFile(Runfile("docs/flags.md"));
  ASSERT_FALSE(doc.empty());
  for (const std::string binary : {"broker/sandbox_brokerd", "launcher/sandbox_launcherd"}) {
    ProgramResult r = RunProgram({Runfile(binary), "--helpfull"});
    const std::string help = r.out + r.err;
    int ours = 0;
    bool in_ours = false;
    for (absl::string_view line : absl::StrSplit(help, '\n')) {
      if (absl::StartsWith(line, "  Flags from ")) {
        in_ours = !absl::StrContains(line, "absl/");
        continue;
      }
      if (!in_ours || !absl::StartsWith(line, "    --")) continue;
      std::string name(line.substr(4, line.find(' ', 4) - 4));
      std::replace(name.begin(), name.end(), '_', '-');
      ++ours;
      EXPECT_TRUE(absl::StrContains(doc, "| `" + name + "` |")) << binary << ": " << name;
    }
    EXPECT_GT(ours, 0) << binary << help;
  }
}

// The "Options:" flags and the "Subcommands:" names of one CLI11 --help text.
struct CliHelp {
  std::vector<std::string> flags, subcommands;
};

CliHelp ReadCliHelp(const std::string& help) {
  CliHelp out;
  std::vector<std::string>* section = nullptr;
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    if (line == "Options:") {
      section = &out.flags;
    } else if (line == "Subcommands:") {
      section = &out.subcommands;
    } else if (!absl::StartsWith(line, "  ")) {
      section = nullptr;
    } else if (section != nullptr) {
      const std::string first(absl::StripLeadingAsciiWhitespace(line).substr(
          0, absl::StripLeadingAsciiWhitespace(line).find(' ')));
      for (absl::string_view name : absl::StrSplit(first, ',')) {
        if (section == &out.subcommands || absl::StartsWith(name, "--")) {
          section->emplace_back(name);
        }
      }
    }
  }
  return out;
}

// sandboxctl (CLI11): every flag in the --help of every subcommand, found from the top one; and
// each --help exits 0.
TEST(FlagReference, ListsEveryFlagOfEverySandboxctlSubcommand) {
  const std::string doc = ReadFile(Runfile("docs/flags.md"));
  const std::string sandboxctl_doc = doc.substr(doc.find("## sandboxctl"));
  std::vector<std::vector<std::string>> pending = {{}};
  int flags = 0, helps = 0;
  while (!pending.empty()) {
    std::vector<std::string> path = pending.back();
    pending.pop_back();
    std::vector<std::string> argv = {Runfile("broker/sandboxctl")};
    argv.insert(argv.end(), path.begin(), path.end());
    argv.push_back("--help");
    ProgramResult r = RunProgram(argv);
    EXPECT_EQ(r.exit_code, 0) << absl::StrJoin(argv, " ") << r.err;
    ++helps;
    const CliHelp help = ReadCliHelp(r.out);
    for (const std::string& flag : help.flags) {
      if (flag == "--help" || flag == "--version") continue;
      ++flags;
      EXPECT_TRUE(absl::StrContains(sandboxctl_doc, "| `" + flag + "` |"))
          << absl::StrJoin(path, " ") << ": " << flag;
    }
    for (const std::string& sub : help.subcommands) {
      std::vector<std::string> next = path;
      next.push_back(sub);
      pending.push_back(next);
    }
  }
  EXPECT_GE(helps, 15) << "sandboxctl, probe, run, session and its 6 verbs, policy, check, plan, "
                          "term, doctor";
  EXPECT_GT(flags, 10);
}

}  // namespace
}  // namespace ccsandbox::testing
