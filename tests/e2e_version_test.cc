// Every binary answers --version with its name, the release and the commit, and exits 0.
#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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

// docs/flags.md lists every flag each binary defines (what --helpfull prints outside Abseil's own).
TEST(FlagReference, ListsEveryFlagOfEveryBinary) {
  const std::string doc = ReadFile(Runfile("docs/flags.md"));
  ASSERT_FALSE(doc.empty());
  for (const std::string binary :
       {"broker/sandbox_brokerd", "broker/sandboxctl", "launcher/sandbox_launcherd"}) {
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

}  // namespace
}  // namespace ccsandbox::testing
