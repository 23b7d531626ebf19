// The client examples (examples/python, examples/node) run as a user would run them, against the
// real daemons (the broker as root and as the unprivileged user of the installed service): each
// launches a session, runs a sandboxed command that prints, writes, is denied a read and exits 3,
// streams all of it, exits with the command's code and destroys its session.
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/daemon_fixture.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::testing {
namespace {

// Prints a marker, writes a file into the bound directory, is refused a read, exits 3.
const char kScript[] =
    "echo example-marker; echo made > made.txt; cat /etc/shadow; echo to-stderr >&2; exit 3";

// The Node example's source, where Node finds it (it resolves the runfile's symlink) and its
// dependencies beside it, installed by `npm ci` (scripts/test.sh runs it: Bazel's tests are
// offline); "" when they are missing.
std::string NodeExampleWithDependencies() {
  char source[PATH_MAX];
  if (realpath(Runfile("examples/node/run_in_sandbox.js").c_str(), source) == nullptr) return "";
  const std::string script = source;
  const std::string dir = script.substr(0, script.rfind('/'));
  return PathExists(dir + "/node_modules/@grpc/grpc-js/package.json") ? script : "";
}

constexpr char kNoDependencies[] =
    "examples/node/node_modules is missing: run `npm ci` in examples/node";

class ExamplesTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    auto daemons = Daemons::Start({.unprivileged_broker = GetParam()});
    ASSERT_TRUE(daemons.ok()) << daemons.status();
    daemons_ = std::move(*daemons);
    work_ = daemons_->MakeWorkdir();
  }

  // The example's arguments after its program: the broker, the directory, the command.
  std::vector<std::string> Args() const {
    return {"--broker=" + daemons_->broker_address(), work_, "--", "sh", "-c", kScript};
  }

  // What both examples must have done.
  void ExpectTheRun(const ProgramResult& r) {
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    // stdout is the command's alone; the example's own lines go to stderr.
    EXPECT_EQ(r.out, "example-marker\n") << r.err;
    for (const char* line : {
             "run_in_sandbox: agent sandbox ON (bubblewrap",
             "on SANDBOX_BACKEND_NATIVE, SANDBOX_STATE_WARM\n",
             "cat: /etc/shadow: Permission denied\n",
             "to-stderr\n",
             "run_in_sandbox: violation file-read* /etc/shadow\n",
             "run_in_sandbox: exit 3\n",
             " destroyed\n",
         }) {
      EXPECT_TRUE(absl::StrContains(r.err, line)) << line << "\n" << r.err;
    }
    EXPECT_EQ(ReadFile(work_ + "/made.txt"), "made\n");
    // The command ran as the broker's uid (a root broker's through idmapped binds).
    struct stat made;
    ASSERT_EQ(stat((work_ + "/made.txt").c_str(), &made), 0);
    EXPECT_EQ(made.st_uid, daemons_->broker_uid());
    // Destroy in the example's finally: no session is left.
    ProgramResult sessions = daemons_->Sandboxctl({"session", "ls"});
    EXPECT_EQ(sessions.exit_code, 0) << sessions.err;
    EXPECT_EQ(sessions.out, "");
  }

  std::unique_ptr<Daemons> daemons_;
  std::string work_;
};

TEST_P(ExamplesTest, ThePythonExampleRunsACommandInASandbox) {
  std::vector<std::string> argv = {"/usr/bin/python3",
                                   Runfile("examples/python/run_in_sandbox.py")};
  for (const std::string& a : Args()) argv.push_back(a);
  ExpectTheRun(RunProgram(argv));
}

TEST_P(ExamplesTest, TheNodeExampleRunsACommandInASandbox) {
  const std::string script = NodeExampleWithDependencies();
  if (script.empty()) CCSANDBOX_SKIP_OR_FAIL_IN_CI(kNoDependencies);
  std::vector<std::string> argv = {"/usr/bin/node", script};
  for (const std::string& a : Args()) argv.push_back(a);
  ExpectTheRun(RunProgram(argv));
}

// Without a broker, both fail as a client should: exit 125, one line naming the error.
TEST_P(ExamplesTest, BothExamplesExit125WhenTheBrokerIsNotThere) {
  const std::string nowhere = "--broker=" + daemons_->dir() + "/no-broker.sock";
  ProgramResult python =
      RunProgram({"/usr/bin/python3", Runfile("examples/python/run_in_sandbox.py"), nowhere, work_,
                  "--", "true"});
  EXPECT_EQ(python.exit_code, 125) << python.out << python.err;
  EXPECT_TRUE(absl::StrContains(python.err, "run_in_sandbox: UNAVAILABLE")) << python.err;
  const std::string script = NodeExampleWithDependencies();
  if (script.empty()) CCSANDBOX_SKIP_OR_FAIL_IN_CI(kNoDependencies);
  ProgramResult node = RunProgram({"/usr/bin/node", script, nowhere, work_, "--", "true"});
  EXPECT_EQ(node.exit_code, 125) << node.out << node.err;
  EXPECT_TRUE(absl::StrContains(node.err, "run_in_sandbox: UNAVAILABLE")) << node.err;
}

INSTANTIATE_TEST_SUITE_P(Brokers, ExamplesTest, ::testing::Bool(), BrokerIdentityName);

}  // namespace
}  // namespace ccsandbox::testing
