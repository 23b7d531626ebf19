#include "broker/confined_open.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "base/real_host_view.h"
#include "gtest/gtest.h"
#include "policy/guardrails/path_confinement.h"

namespace ccsandbox::broker {
namespace {

using absl::StatusCode;

class ConfinedOpen : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/confined_open_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    Mkdir("/root");
    Mkdir("/root/sub");
    Mkdir("/outside");
    Write("/root/sub/file", "inside");
    Write("/outside/file", "secret");
    absl::StatusOr<UniqueFd> root = OpenRoot(base_ + "/root");
    ASSERT_TRUE(root.ok()) << root.status();
    root_ = std::move(*root);
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + base_).c_str()), 0); }

  void Mkdir(const std::string& p) { ASSERT_EQ(mkdir((base_ + p).c_str(), 0755), 0); }
  void Write(const std::string& p, const std::string& content) {
    std::ofstream(base_ + p) << content;
  }
  void Symlink(const std::string& target, const std::string& link) {
    ASSERT_EQ(symlink(target.c_str(), (base_ + link).c_str()), 0);
  }
  static std::string ReadAll(int fd) {
    std::string out;
    char buf[256];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, n);
    return out;
  }

  std::string base_;
  UniqueFd root_;
};

TEST_F(ConfinedOpen, OpensInsideAndFollowsSymlinksThatStayInside) {
  absl::StatusOr<UniqueFd> fd = OpenConfined(root_.get(), "sub/file", O_RDONLY);
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(ReadAll(fd->get()), "inside");
  Symlink("sub", "/root/alias");
  fd = OpenConfined(root_.get(), "alias/file", O_RDONLY);
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(ReadAll(fd->get()), "inside");
}

TEST_F(ConfinedOpen, KernelRefusesEveryEscape) {
  Symlink(base_ + "/outside", "/root/abs");
  Symlink("../outside/file", "/root/rel");
  Symlink("/proc/self/root" + base_ + "/outside/file", "/root/magic");
  for (const char* path :
       {"../outside/file", "sub/../../outside/file", "abs/file", "rel", "magic"}) {
    for (int flags : {O_RDONLY, O_WRONLY | O_CREAT}) {
      absl::StatusOr<UniqueFd> fd = OpenConfined(root_.get(), path, flags, 0600);
      EXPECT_EQ(fd.status().code(), StatusCode::kPermissionDenied) << path << ": " << fd.status();
    }
  }
  EXPECT_EQ(OpenConfined(root_.get(), "/etc/passwd", O_RDONLY).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenConfined(root_.get(), "missing", O_RDONLY).status().code(), StatusCode::kNotFound);
}

TEST_F(ConfinedOpen, MagicLinksAreRefused) {
  absl::StatusOr<UniqueFd> proc = OpenRoot("/proc/self");
  ASSERT_TRUE(proc.ok()) << proc.status();
  EXPECT_FALSE(OpenConfined(proc->get(), "root/etc/passwd", O_RDONLY).ok());
  EXPECT_FALSE(OpenConfined(proc->get(), "cwd", O_RDONLY | O_DIRECTORY).ok());
}

// The check passes, then the directory is swapped for a symlink to the outside before the
// open: the open must fail, not follow it.
TEST_F(ConfinedOpen, SymlinkSwappedInAfterTheCheckIsRefused) {
  RealHostView view;
  std::vector<policy::ConfinementRoot> roots = {{base_ + "/root", true}};
  absl::StatusOr<policy::ConfinedPath> checked =
      policy::ConfinePath(view, roots, base_ + "/root", "sub/file", policy::PathIntent::kRead);
  ASSERT_TRUE(checked.ok()) << checked.status();
  ASSERT_EQ(checked->relative, "sub/file");

  ASSERT_EQ(rename((base_ + "/root/sub").c_str(), (base_ + "/root/sub.old").c_str()), 0);
  Symlink(base_ + "/outside", "/root/sub");

  absl::StatusOr<UniqueFd> fd = OpenConfined(root_.get(), checked->relative, O_RDONLY);
  EXPECT_EQ(fd.status().code(), StatusCode::kPermissionDenied) << fd.status();
  // A relative symlink swapped in instead: refused too.
  ASSERT_EQ(unlink((base_ + "/root/sub").c_str()), 0);
  Symlink("../outside", "/root/sub");
  fd = OpenConfined(root_.get(), checked->relative, O_WRONLY | O_TRUNC);
  EXPECT_EQ(fd.status().code(), StatusCode::kPermissionDenied) << fd.status();
  std::ifstream secret(base_ + "/outside/file");
  std::string content((std::istreambuf_iterator<char>(secret)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "secret");
}

TEST_F(ConfinedOpen, MakeDirsConfinedCreatesInsideOnly) {
  ASSERT_TRUE(MakeDirsConfined(root_.get(), "a/b/c").ok());
  struct stat st;
  EXPECT_EQ(stat((base_ + "/root/a/b/c").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  absl::StatusOr<UniqueFd> fd =
      OpenConfined(root_.get(), "a/b/c/new.txt", O_WRONLY | O_CREAT | O_EXCL, 0644);
  ASSERT_TRUE(fd.ok()) << fd.status();

  Symlink(base_ + "/outside", "/root/planted");
  absl::Status s = MakeDirsConfined(root_.get(), "planted/evil");
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s;
  EXPECT_NE(stat((base_ + "/outside/evil").c_str(), &st), 0);
  EXPECT_EQ(MakeDirsConfined(root_.get(), "a/../x").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ccsandbox::broker
