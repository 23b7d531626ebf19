// The macOS spawn's plumbing, on Linux, with a stand-in `sandbox-exec` (testdata/
// fake_sandbox_exec.sh) that records how it was called and execs the command: the exec is the
// rendered one, the kept profile is what sandbox-exec reads, the root pid is the command's, the
// environment is the run's with the session's proxies. Seatbelt itself is not involved.
#include "launcher/macos/seatbelt_launch.h"

#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "launcher/macos/macos_test_support.h"

namespace ccsandbox::launcher::macos {
namespace {

using testing::ReadAll;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class SeatbeltLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = absl::StrCat(std::getenv("TEST_TMPDIR"), "/profiles-XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    options_.profile_dir = dir_;
    options_.sandbox_exec =
        absl::StrCat(std::getenv("TEST_SRCDIR"), "/", std::getenv("TEST_WORKSPACE"),
                     "/launcher/macos/testdata/fake_sandbox_exec.sh");
    run_.argv = {"sh", "-c", "echo \"$HTTP_PROXY|$ALL_PROXY|$(pwd)|$$|$SECRET\""};
    run_.env = {{"PATH", "/usr/bin:/bin"}, {"HTTP_PROXY", "http://elsewhere:1"}};
    run_.workdir = std::getenv("TEST_TMPDIR");
    v1::EgressPlan egress;
    egress.set_http_port(50001);
    egress.set_socks_port(50002);
    egress.set_http_proxy_url("http://ccsandbox:pw@127.0.0.1:50001");
    egress.set_socks_proxy_url("socks5h://ccsandbox:pw@127.0.0.1:50002");
    run_.egress = egress;
  }

  std::string dir_;
  SeatbeltLaunchOptions options_;
  SeatbeltRun run_;
  const std::string profile_ = "(version 1)\n(allow default)\n(deny network-outbound)\n";
};

TEST_F(SeatbeltLaunchTest, SpawnsTheRenderedExecWithTheKeptProfileAsTheRunsRoot) {
  setenv("SECRET", "the launcher's own environment", 1);  // never inherited
  absl::StatusOr<SeatbeltLaunched> launched = LaunchSeatbelt("run-1", profile_, run_, options_);
  ASSERT_TRUE(launched.ok()) << launched.status();
  SpawnedProcess& process = *launched->process;
  const std::string out = ReadAll(process.stdout_fd());
  const std::string err = ReadAll(process.stderr_fd());
  absl::StatusOr<int> status = process.Reap();
  ASSERT_TRUE(status.ok());
  ASSERT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << err;

  EXPECT_EQ(launched->profile_path, dir_ + "/run-1.sb");
  EXPECT_EQ(ReadFile(launched->profile_path), profile_);  // kept after the run
  struct stat st;
  ASSERT_EQ(stat(launched->profile_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // The command ran in the workdir, with the session's proxies, as the root pid itself.
  EXPECT_EQ(out, absl::StrCat("http://ccsandbox:pw@127.0.0.1:50001|socks5h://ccsandbox:pw@127.0.0."
                              "1:50002|",
                              run_.workdir, "|", process.pid(), "|\n"));

  // sandbox-exec was called exactly as rendered, and read the kept profile.
  const std::string record = launched->profile_path + ".record";
  SeatbeltRun rendered_run = run_;
  rendered_run.profile_path = launched->profile_path;
  absl::StatusOr<SeatbeltExec> exec = RenderSeatbeltExec(rendered_run, options_.sandbox_exec);
  ASSERT_TRUE(exec.ok());
  const std::vector<std::string> args(exec->argv.begin() + 1, exec->argv.end());
  EXPECT_EQ(ReadFile(record + "/argv"), absl::StrCat(absl::StrJoin(args, "\n"), "\n"));
  EXPECT_EQ(ReadFile(record + "/profile"), profile_);
  std::vector<std::string> env = absl::StrSplit(ReadFile(record + "/env"), '\n', absl::SkipEmpty());
  env.erase(std::remove_if(env.begin(), env.end(),
                           // what sh itself adds to the environment it hands on
                           [](const std::string& e) { return e.rfind("PWD=", 0) == 0; }),
            env.end());
  std::sort(env.begin(), env.end());
  EXPECT_EQ(env, exec->envp);
}

TEST_F(SeatbeltLaunchTest, AKeptProfileIsNeverOverwrittenOrWrittenThroughALink) {
  ASSERT_EQ(symlink("/etc/passwd-not-ours", (dir_ + "/run-2.sb").c_str()), 0);
  absl::StatusOr<SeatbeltLaunched> planted = LaunchSeatbelt("run-2", profile_, run_, options_);
  EXPECT_EQ(planted.status().code(), absl::StatusCode::kAlreadyExists) << planted.status();

  absl::StatusOr<SeatbeltLaunched> first = LaunchSeatbelt("run-3", profile_, run_, options_);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<SeatbeltLaunched> again =
      LaunchSeatbelt("run-3", "(allow default)", run_, options_);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadFile(dir_ + "/run-3.sb"), profile_);
}

TEST_F(SeatbeltLaunchTest, ARunIdThatIsNotAPlainNameOrABadRunSpawnsNothing) {
  for (const std::string id : {"", "../x", ".hidden", "a/b"}) {
    EXPECT_EQ(LaunchSeatbelt(id, profile_, run_, options_).status().code(),
              absl::StatusCode::kInvalidArgument)
        << id;
  }
  SeatbeltRun bad = run_;
  bad.argv.clear();
  EXPECT_EQ(LaunchSeatbelt("run-4", profile_, bad, options_).status().code(),
            absl::StatusCode::kInvalidArgument);
  struct stat st;
  EXPECT_NE(lstat((dir_ + "/run-4.sb").c_str(), &st), 0);  // refused before anything was written
}

}  // namespace
}  // namespace ccsandbox::launcher::macos
