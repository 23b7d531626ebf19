#include "workspace/remove_tree.h"

#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"
#include "gtest/gtest.h"
#include "tests/reflink_volumes.h"
#include "tests/skip_or_fail_in_ci.h"

namespace ccsandbox::workspace {
namespace {

using ccsandbox::testing::TestVolume;

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class RemoveTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // /var/tmp, not TEST_TMPDIR: the unprivileged case needs a path another uid can reach.
    char tmpl[] = "/var/tmp/ccs-remove.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  }
  void TearDown() override { system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string dir_;
};

TEST_F(RemoveTreeTest, MissingIsOk) {
  EXPECT_TRUE(RemoveTree(dir_ + "/missing").ok());
  EXPECT_TRUE(RemoveTree(dir_ + "/missing/below").ok());
}

TEST_F(RemoveTreeTest, RefusesWhatIsNotAnAbsoluteNormalisedPath) {
  for (const std::string& path :
       {std::string("relative"), std::string(""), std::string("/"), dir_ + "/a/../b", dir_ + "/"}) {
    EXPECT_EQ(RemoveTree(path).code(), absl::StatusCode::kInvalidArgument) << path;
  }
  EXPECT_TRUE(Exists(dir_));
}

TEST_F(RemoveTreeTest, RemovesAFile) {
  WriteText(dir_ + "/f", "x");
  EXPECT_TRUE(RemoveTree(dir_ + "/f").ok());
  EXPECT_FALSE(Exists(dir_ + "/f"));
}

TEST_F(RemoveTreeTest, RemovesATreeWithReadOnlyDirectories) {
  const std::string tree = dir_ + "/tree";
  ASSERT_EQ(system(("mkdir -p '" + tree + "/a/b/c' '" + tree + "/d' && touch '" + tree +
                    "/a/b/c/f' '" + tree + "/a/g' && mkfifo '" + tree + "/a/fifo' && chmod 0444 '" +
                    tree + "/a/g' && chmod 0555 '" + tree + "/a/b/c' '" + tree +
                    "/a' && chmod 0 '" + tree + "/d'")
                       .c_str()),
            0);
  EXPECT_TRUE(RemoveTree(tree).ok());
  EXPECT_FALSE(Exists(tree));
  EXPECT_TRUE(Exists(dir_));
}

// Without root's capabilities the permissions matter: a uid removing its own tree of read-only
// and unreadable directories and files.
TEST_F(RemoveTreeTest, RemovesItsOwnReadOnlyTreeWithoutPrivilege) {
  if (geteuid() != 0) CCSANDBOX_SKIP_OR_FAIL_IN_CI("switching to another uid needs root");
  const std::string tree = dir_ + "/tree";
  ASSERT_EQ(chown(dir_.c_str(), 65534, 65534), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
        setresuid(65534, 65534, 65534) != 0) {
      _exit(10);
    }
    const std::string build =
        "mkdir -p '" + tree + "/a/b/c' '" + tree + "/x/y' '" + tree + "/z' && touch '" + tree +
        "/a/b/c/f' '" + tree + "/x/y/g' && chmod 0 '" + tree + "/x/y/g' && chmod 0555 '" + tree +
        "/a/b/c' '" + tree + "/a/b' && chmod 0 '" + tree + "/x/y' && chmod 0300 '" + tree +
        "/x' && chmod 0500 '" + tree + "/z' '" + tree + "'";
    if (system(build.c_str()) != 0) _exit(11);
    const absl::Status removed = RemoveTree(tree);
    if (!removed.ok()) {
      fprintf(stderr, "%s\n", removed.ToString().c_str());
      _exit(12);
    }
    _exit(Exists(tree) ? 13 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

TEST_F(RemoveTreeTest, SymlinksAreUnlinkedTheirTargetsUntouched) {
  const std::string outside = dir_ + "/outside";
  ASSERT_EQ(mkdir(outside.c_str(), 0755), 0);
  WriteText(outside + "/keep", "keep me");
  const std::string tree = dir_ + "/tree";
  ASSERT_EQ(mkdir(tree.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((tree + "/sub").c_str(), 0755), 0);
  ASSERT_EQ(symlink(outside.c_str(), (tree + "/to-dir").c_str()), 0);
  ASSERT_EQ(symlink((outside + "/keep").c_str(), (tree + "/sub/to-file").c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), (dir_ + "/top-link").c_str()), 0);

  EXPECT_TRUE(RemoveTree(tree).ok());
  EXPECT_FALSE(Exists(tree));
  EXPECT_TRUE(RemoveTree(dir_ + "/top-link").ok());
  EXPECT_FALSE(Exists(dir_ + "/top-link"));
  EXPECT_EQ(ReadText(outside + "/keep"), "keep me");
}

// An agent's chain deeper than the walk's cap, some links unreadable, some names clashing with
// what the walk uses: removed all the same, with a bounded number of open directories, by the
// unprivileged owner too (moving a directory up needs it writable).
TEST_F(RemoveTreeTest, ATreeOfAnyDepthIsRemoved) {
  if (geteuid() != 0) CCSANDBOX_SKIP_OR_FAIL_IN_CI("switching to another uid needs root");
  const std::string path = dir_ + "/deep";
  ASSERT_EQ(chown(dir_.c_str(), 65534, 65534), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
        setresuid(65534, 65534, 65534) != 0) {
      _exit(10);
    }
    if (mkdir(path.c_str(), 0755) != 0 || mkdir((path + "/.deep-0").c_str(), 0755) != 0) {
      _exit(11);
    }
    UniqueFd fd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    for (int i = 0; i < 1000; ++i) {
      const char* name = i % 300 == 299 ? ".deep-1" : "d";
      if (mkdirat(fd.get(), name, 0755) != 0) _exit(12);
      UniqueFd next(openat(fd.get(), name, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!next.valid() || (i % 97 == 0 && fchmod(fd.get(), 0) != 0)) _exit(13);
      fd = std::move(next);
    }
    fd.Reset();
    const absl::Status removed = RemoveTree(path);
    if (!removed.ok()) {
      fprintf(stderr, "%s\n", removed.ToString().substr(0, 300).c_str());
      _exit(14);
    }
    _exit(Exists(path) ? 15 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

// A sandbox's bind left inside a conversation leads into another tree: never entered.
TEST_F(RemoveTreeTest, AMountPointInsideIsNotEntered) {
  absl::StatusOr<std::unique_ptr<TestVolume>> volume = TestVolume::Make(TestVolume::Kind::kTmpfs);
  if (absl::IsFailedPrecondition(volume.status())) {
    CCSANDBOX_SKIP_OR_FAIL_IN_CI(volume.status().ToString());
  }
  ASSERT_TRUE(volume.ok()) << volume.status();
  WriteText((*volume)->path() + "/precious", "host data");
  const std::string tree = dir_ + "/tree";
  const std::string bound = tree + "/sub/bound";
  ASSERT_EQ(system(("mkdir -p '" + bound + "'").c_str()), 0);
  ASSERT_EQ(mount((*volume)->path().c_str(), bound.c_str(), nullptr, MS_BIND, nullptr), 0);

  const absl::Status removed = RemoveTree(tree);
  EXPECT_EQ(removed.code(), absl::StatusCode::kFailedPrecondition) << removed;
  EXPECT_TRUE(absl::StrContains(removed.message(), "mount point")) << removed;
  EXPECT_EQ(ReadText((*volume)->path() + "/precious"), "host data");
  EXPECT_EQ(RemoveTree(bound).code(), absl::StatusCode::kFailedPrecondition);

  ASSERT_EQ(umount2(bound.c_str(), 0), 0);
  EXPECT_TRUE(RemoveTree(tree).ok());
  EXPECT_FALSE(Exists(tree));
}

}  // namespace
}  // namespace ccsandbox::workspace
