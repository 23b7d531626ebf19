#include "policy/plan/push_wiring.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

struct PathCase {
  std::string url;
  std::string path;  // "" = refused
};

class GatewayPaths : public ::testing::TestWithParam<PathCase> {};

TEST_P(GatewayPaths, AsTheTableSays) {
  absl::StatusOr<std::string> path = GatewayPathFor(GetParam().url);
  if (GetParam().path.empty()) {
    ASSERT_FALSE(path.ok()) << *path;
    EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(path.status().message().find("push.repositories"), std::string::npos);
  } else {
    ASSERT_TRUE(path.ok()) << path.status();
    EXPECT_EQ(*path, GetParam().path);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, GatewayPaths,
    ::testing::Values(
        PathCase{"https://github.com/o/r.git", "/github.com/o/r.git"},
        PathCase{"https://github.com/o/r", "/github.com/o/r"},
        PathCase{"https://github.com/o/r.git/", "/github.com/o/r.git"},
        PathCase{"http://127.0.0.1:8080/git/r.git", "/127.0.0.1:8080/git/r.git"},
        PathCase{"git@github.com:o/r.git", ""}, PathCase{"ssh://git@github.com/o/r.git", ""},
        PathCase{"https://user:token@github.com/o/r.git", ""}, PathCase{"https://github.com", ""},
        PathCase{"https://github.com/", ""}, PathCase{"https:///o/r", ""},
        PathCase{"https://github.com/o/../x", ""}, PathCase{"https://github.com/o//r", ""},
        PathCase{"https://github.com/o/r?x=1", ""}, PathCase{"https://github.com/o/r#f", ""},
        PathCase{"https://github.com/o r", ""}, PathCase{"https://github.com/o/r\n", ""},
        PathCase{"file:///srv/r.git", ""}));

TEST(PushRepositories, ACredentialInAUrlIsNeverEchoed) {
  absl::StatusOr<std::string> path = GatewayPathFor("https://user:s3cret@github.com/o/r.git");
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().message().find("s3cret"), std::string::npos) << path.status();
}

TEST(PushRepositories, CountAndDuplicatesAreRefusedNamingTheField) {
  EXPECT_TRUE(ValidatePushRepositories({"https://github.com/o/r.git", "https://x.test/r"}).ok());
  absl::Status twice =
      ValidatePushRepositories({"https://github.com/o/r.git", "https://github.com/o/r.git/"});
  EXPECT_FALSE(twice.ok());
  EXPECT_NE(twice.message().find("listed twice"), std::string::npos) << twice;
  std::vector<std::string> many;
  for (size_t i = 0; i <= kMaxPushRepositories; ++i) many.push_back(absl::StrCat("https://h/r", i));
  EXPECT_FALSE(ValidatePushRepositories(many).ok());
}

// What git itself makes of the environment: `git remote get-url --push` applies pushInsteadOf.
class GitRewrites : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/ccsandbox-push-wiring.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    ASSERT_EQ(Run("git init -q " + dir_), "");
  }
  void TearDown() override { Run("rm -rf " + dir_); }

  static std::string Run(const std::string& command) {
    std::string out;
    FILE* p = popen(command.c_str(), "r");
    if (p == nullptr) return "popen failed";
    char buf[512];
    while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
    pclose(p);
    return out;
  }

  // The push URL git uses for a remote at `url`, in a run with `repositories` pushed through the
  // gateway; and the fetch URL, which must stay as it was.
  std::pair<std::string, std::string> Urls(const std::vector<std::string>& repositories,
                                           const std::string& url) {
    std::string env = "env -i PATH=/usr/bin:/bin HOME=" + dir_;
    for (const auto& [name, value] : PushEnvironment(repositories)) {
      env += " '" + name + "=" + value + "'";
    }
    Run(absl::StrCat("git -C ", dir_, " remote remove origin 2>/dev/null; git -C ", dir_,
                     " remote add origin '", url, "'"));
    std::string push = Run(absl::StrCat(env, " git -C ", dir_, " remote get-url --push origin"));
    std::string fetch = Run(absl::StrCat(env, " git -C ", dir_, " remote get-url origin"));
    if (!push.empty()) push.pop_back();
    if (!fetch.empty()) fetch.pop_back();
    return {push, fetch};
  }

  std::string dir_;
};

TEST_F(GitRewrites, EveryGithubSpellingAndEachLinkedRepositoryPushToTheGateway) {
  const std::vector<std::string> repos = {"https://github.com/o/r.git",
                                          "http://git.internal:8080/team/tool.git"};
  const std::string gw = absl::StrCat("http://127.0.0.1:", kSandboxPushPort);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"https://github.com/o/r.git", gw + "/github.com/o/r.git"},
      {"https://github.com/o/r", gw + "/github.com/o/r"},
      {"git@github.com:o/r.git", gw + "/github.com/o/r.git"},
      {"ssh://git@github.com/o/r.git", gw + "/github.com/o/r.git"},
      {"https://github.com/other/x.git", gw + "/github.com/other/x.git"},  // refused there
      {"http://git.internal:8080/team/tool.git", gw + "/git.internal:8080/team/tool.git"},
      {"http://git.internal:8080/team/tool", gw + "/git.internal:8080/team/tool"},
      {"https://gitlab.example/o/r.git", "https://gitlab.example/o/r.git"},  // not ours
  };
  for (const auto& [url, expected] : cases) {
    const auto [push, fetch] = Urls(repos, url);
    EXPECT_EQ(push, expected) << url;
    EXPECT_EQ(fetch, url) << "fetches go to the upstream directly: " << url;
  }
}

}  // namespace
}  // namespace ccsandbox::policy
