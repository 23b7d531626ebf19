#include "workspace/git_checkout.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/skip_or_fail_in_ci.h"
#include "workspace/sample_repository.h"

namespace ccsandbox::workspace {
namespace {

using testing::Git;

constexpr char kField[] = "repositories[0].path";

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string Real(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  std::string out = real ? real : "";
  free(real);
  return out;
}

class GitCheckoutTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string tmpl =
        absl::StrCat(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp", "/checkouts.XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = new std::string(Real(tmpl));
    const std::string& d = *dir_;
    ASSERT_EQ(mkdir((d + "/main").c_str(), 0755), 0);
    WriteText(d + "/main/a.txt", "a\n");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"init", "-q", "-b", "main"},
          {"add", "-A"},
          {"commit", "-q", "-m", "a"},
          {"worktree", "add", "-q", d + "/wt", "-b", "feature"}}) {
      ASSERT_TRUE(Git(d + "/main", args).ok()) << args[0];
    }
    ASSERT_TRUE(Git(d, {"init", "-q", "--bare", d + "/bare.git"}).ok());
    ASSERT_TRUE(
        Git(d, {"init", "-q", "--separate-git-dir=" + d + "/sep.git", d + "/separate"}).ok());
    ASSERT_EQ(mkdir((d + "/plain").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((d + "/main/sub").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((d + "/garbage").c_str(), 0755), 0);
    WriteText(d + "/garbage/.git", "hello, not git\n");
    ASSERT_EQ(mkdir((d + "/no-head").c_str(), 0755), 0);
    WriteText(d + "/no-head/.git", "gitdir: " + d + "/plain\n");
    ASSERT_EQ(mkdir((d + "/bad-common").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((d + "/bad-common-git").c_str(), 0755), 0);
    WriteText(d + "/bad-common-git/HEAD", "ref: refs/heads/main\n");
    WriteText(d + "/bad-common-git/commondir", "../plain\n");
    WriteText(d + "/bad-common/.git", "gitdir: ../bad-common-git\n");
    ASSERT_EQ(mkdir((d + "/symlinked").c_str(), 0755), 0);
    ASSERT_EQ(symlink((d + "/main/.git").c_str(), (d + "/symlinked/.git").c_str()), 0);
    ASSERT_EQ(symlink((d + "/main").c_str(), (d + "/link-to-main").c_str()), 0);
    WriteText(d + "/file", "x");
  }
  static void TearDownTestSuite() {
    if (dir_ != nullptr) system(("rm -rf '" + *dir_ + "'").c_str());
    delete dir_;
    dir_ = nullptr;
  }
  static std::string* dir_;
};

std::string* GitCheckoutTest::dir_ = nullptr;

TEST_F(GitCheckoutTest, MainCheckout) {
  absl::StatusOr<GitCheckout> checkout = InspectCheckout(kField, *dir_ + "/main");
  ASSERT_TRUE(checkout.ok()) << checkout.status();
  EXPECT_EQ(checkout->kind, GitCheckout::Kind::kMain);
  EXPECT_EQ(checkout->root, *dir_ + "/main");
  EXPECT_EQ(checkout->git_dir, *dir_ + "/main/.git");
  EXPECT_EQ(checkout->common_dir, checkout->git_dir);
}

TEST_F(GitCheckoutTest, ThroughASymlinkTheRootIsReal) {
  absl::StatusOr<GitCheckout> checkout = InspectCheckout(kField, *dir_ + "/link-to-main");
  ASSERT_TRUE(checkout.ok()) << checkout.status();
  EXPECT_EQ(checkout->root, *dir_ + "/main");
}

TEST_F(GitCheckoutTest, LinkedWorktree) {
  absl::StatusOr<GitCheckout> checkout = InspectCheckout(kField, *dir_ + "/wt");
  ASSERT_TRUE(checkout.ok()) << checkout.status();
  EXPECT_EQ(checkout->kind, GitCheckout::Kind::kLinkedWorktree);
  EXPECT_EQ(checkout->root, *dir_ + "/wt");
  EXPECT_EQ(checkout->git_dir, *dir_ + "/main/.git/worktrees/wt");
  EXPECT_EQ(checkout->common_dir, *dir_ + "/main/.git");
}

TEST_F(GitCheckoutTest, RelativeGitdirIsRelativeToTheCheckout) {
  const std::string rel = *dir_ + "/wt-relative";
  ASSERT_EQ(mkdir(rel.c_str(), 0755), 0);
  WriteText(rel + "/.git", "gitdir: ../main/.git/worktrees/wt\n");
  absl::StatusOr<GitCheckout> checkout = InspectCheckout(kField, rel);
  ASSERT_TRUE(checkout.ok()) << checkout.status();
  EXPECT_EQ(checkout->git_dir, *dir_ + "/main/.git/worktrees/wt");
  EXPECT_EQ(checkout->common_dir, *dir_ + "/main/.git");
}

TEST_F(GitCheckoutTest, SeparateGitDirWithoutCommondir) {
  absl::StatusOr<GitCheckout> checkout = InspectCheckout(kField, *dir_ + "/separate");
  ASSERT_TRUE(checkout.ok()) << checkout.status();
  EXPECT_EQ(checkout->kind, GitCheckout::Kind::kLinkedWorktree);
  EXPECT_EQ(checkout->git_dir, *dir_ + "/sep.git");
  EXPECT_EQ(checkout->common_dir, *dir_ + "/sep.git");
}

TEST_F(GitCheckoutTest, NotACheckoutIsInvalidArgumentNamingTheField) {
  struct Case {
    std::string path;
    const char* says;
  };
  const std::string& d = *dir_;
  const Case kCases[] = {
      {"relative/repo", "relative"},
      {"", "empty"},
      {d + "/main/../main", "'..'"},
      {d + "/main/", "trailing"},
      {d + "/missing", "does not exist"},
      {d + "/file", "not a directory"},
      {d + "/plain", "no .git"},
      {d + "/main/sub", "no .git"},
      {d + "/bare.git", "bare repository"},
      {d + "/garbage", "gitdir"},
      {d + "/no-head", "no HEAD"},
      {d + "/bad-common", "common directory"},
      {d + "/symlinked", "symlink"},
  };
  for (const Case& c : kCases) {
    absl::StatusOr<GitCheckout> checkout = InspectCheckout(kField, c.path);
    EXPECT_EQ(checkout.status().code(), absl::StatusCode::kInvalidArgument) << c.path;
    EXPECT_TRUE(absl::StartsWith(checkout.status().message(), kField)) << checkout.status();
    EXPECT_TRUE(absl::StrContains(checkout.status().message(), c.says)) << checkout.status();
  }
}

// A .git file is the user's to write: pointing it at another user's repository must not have a
// privileged broker clone that repository for them.
TEST_F(GitCheckoutTest, GitDirectoriesOfAnotherOwnerAreRefused) {
  const std::string& d = *dir_;
  ASSERT_EQ(mkdir((d + "/foreign").c_str(), 0755), 0);
  WriteText(d + "/foreign/.git", "gitdir: " + d + "/foreign.git\n");
  ASSERT_TRUE(Git(d, {"init", "-q", "--bare", d + "/foreign.git"}).ok());
  absl::StatusOr<GitCheckout> own = InspectCheckout(kField, d + "/foreign");
  ASSERT_TRUE(own.ok()) << own.status();
  if (chown((d + "/foreign.git").c_str(), 1234, 1234) != 0) {
    CCSANDBOX_SKIP_OR_FAIL_IN_CI("giving a directory to another uid needs root");
  }
  absl::StatusOr<GitCheckout> checkout = InspectCheckout(kField, d + "/foreign");
  EXPECT_EQ(checkout.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(checkout.status().message(), "not owned by the working tree's"))
      << checkout.status();

  // The same for a linked worktree's private git dir.
  ASSERT_EQ(chown((d + "/foreign.git").c_str(), geteuid(), getegid()), 0);
  ASSERT_EQ(chown((d + "/main/.git/worktrees/wt").c_str(), 1234, 1234), 0);
  checkout = InspectCheckout(kField, d + "/wt");
  EXPECT_EQ(checkout.status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(chown((d + "/main/.git/worktrees/wt").c_str(), geteuid(), getegid()), 0);
  EXPECT_TRUE(InspectCheckout(kField, d + "/wt").ok());
}

}  // namespace
}  // namespace ccsandbox::workspace
