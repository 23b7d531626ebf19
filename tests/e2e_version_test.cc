// Every binary answers --version with its name, the release and the commit, and exits 0.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

}  // namespace
}  // namespace ccsandbox::testing
