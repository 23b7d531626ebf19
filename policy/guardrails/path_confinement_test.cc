#include "policy/guardrails/path_confinement.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/real_host_view.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

using Kind = HostView::Kind;
using absl::StatusCode;

// An in-memory tree; remembers every path it was asked about.
class FakeTree : public HostView {
 public:
  FakeTree& Dir(const std::string& p) {
    nodes_[p] = {Kind::kDirectory, ""};
    return *this;
  }
  FakeTree& File(const std::string& p) {
    nodes_[p] = {Kind::kFile, ""};
    return *this;
  }
  FakeTree& Link(const std::string& p, const std::string& target) {
    nodes_[p] = {Kind::kSymlink, target};
    return *this;
  }
  Kind KindOf(const std::string& path) const override {
    asked_.insert(path);
    if (path == "/") return Kind::kDirectory;
    auto it = nodes_.find(path);
    return it == nodes_.end() ? Kind::kMissing : it->second.kind;
  }
  std::string LinkTarget(const std::string& path) const override {
    auto it = nodes_.find(path);
    return it == nodes_.end() || it->second.kind != Kind::kSymlink ? "" : it->second.target;
  }
  const std::set<std::string>& asked() const { return asked_; }

 private:
  struct Node {
    Kind kind;
    std::string target;
  };
  std::map<std::string, Node> nodes_;
  mutable std::set<std::string> asked_;
};

FakeTree Conversation() {
  FakeTree t;
  t.Dir("/c")
      .Dir("/c/agents")
      .Dir("/c/agents/a1")
      .Dir("/c/agents/a1/work")
      .Dir("/c/agents/a1/work/src")
      .File("/c/agents/a1/work/src/main.cc")
      .Dir("/c/agents/a2")
      .Dir("/c/agents/a2/work")
      .File("/c/agents/a2/work/notes.md")
      .Dir("/c/repos")
      .Dir("/c/repos/r1")
      .File("/c/repos/r1/x.c")
      .Dir("/s")
      .Dir("/s/att")
      .File("/s/att/spec.pdf")
      .Dir("/etc")
      .File("/etc/passwd")
      .Dir("/root")
      .Dir("/root/.ssh")
      .File("/root/.ssh/id_ed25519")
      // Symlink tricks inside the worktree.
      .Link("/c/agents/a1/work/etc_link", "/etc")
      .Link("/c/agents/a1/work/passwd", "/etc/passwd")
      .Link("/c/agents/a1/work/up", "../../../..")
      .Link("/c/agents/a1/work/ssh", "/root/.ssh")
      .Link("/c/agents/a1/work/sibling", "../../a2/work")
      .Link("/c/agents/a1/work/repo", "/c/repos/r1")
      .Link("/c/agents/a1/work/repo_rel", "../../../repos/r1/x.c")
      .Link("/c/agents/a1/work/dangling_out", "/etc/cron.d/evil")
      .Link("/c/agents/a1/work/dangling_in", "src/new.cc")
      .Link("/c/agents/a1/work/root", "/")
      .Link("/c/agents/a1/work/loop_a", "loop_b")
      .Link("/c/agents/a1/work/loop_b", "loop_a")
      .Link("/c/agents/a1/work/chain1", "chain2")
      .Link("/c/agents/a1/work/chain2", "src");
  return t;
}

const std::vector<ConfinementRoot> kRoots = {
    {"/c/agents/a1/work", true}, {"/c/repos", true}, {"/s/att", false}};
constexpr char kWorkdir[] = "/c/agents/a1/work";

struct OkCase {
  std::string path;
  PathIntent intent;
  size_t root;
  std::string relative;
  bool exists;
};

class ConfinesInside : public testing::TestWithParam<OkCase> {};

TEST_P(ConfinesInside, ToRootAndRelativePath) {
  FakeTree t = Conversation();
  const OkCase& c = GetParam();
  absl::StatusOr<ConfinedPath> p = ConfinePath(t, kRoots, kWorkdir, c.path, c.intent);
  ASSERT_TRUE(p.ok()) << c.path << ": " << p.status();
  EXPECT_EQ(p->root_index, c.root) << c.path;
  EXPECT_EQ(p->relative, c.relative) << c.path;
  EXPECT_EQ(p->exists, c.exists) << c.path;
}

INSTANTIATE_TEST_SUITE_P(PathConfinement, ConfinesInside,
                         testing::ValuesIn(std::vector<OkCase>{
                             {"src/main.cc", PathIntent::kRead, 0, "src/main.cc", true},
                             {"./src//main.cc", PathIntent::kRead, 0, "src/main.cc", true},
                             {".", PathIntent::kRead, 0, ".", true},
                             {"src/../src/main.cc", PathIntent::kRead, 0, "src/main.cc", true},
                             {"/c/agents/a1/work/src/main.cc", PathIntent::kRead, 0, "src/main.cc",
                              true},
                             {"/c/repos/r1/x.c", PathIntent::kWrite, 1, "r1/x.c", true},
                             {"../../../repos/r1/x.c", PathIntent::kRead, 1, "r1/x.c", true},
                             {"repo/x.c", PathIntent::kRead, 1, "r1/x.c", true},
                             {"repo_rel", PathIntent::kRead, 1, "r1/x.c", true},
                             {"chain1/main.cc", PathIntent::kRead, 0, "src/main.cc", true},
                             {"/s/att/spec.pdf", PathIntent::kRead, 2, "spec.pdf", true},
                             {"src/new.cc", PathIntent::kWrite, 0, "src/new.cc", false},
                             {"new/dir/file.txt", PathIntent::kWrite, 0, "new/dir/file.txt", false},
                             {"dangling_in", PathIntent::kWrite, 0, "src/new.cc", false},
                             {"/c/repos/r2/new.c", PathIntent::kWrite, 1, "r2/new.c", false},
                         }));

struct DenyCase {
  std::string path;
  PathIntent intent;
  StatusCode code;
  std::string message_part;
};

class Refuses : public testing::TestWithParam<DenyCase> {};

TEST_P(Refuses, WithReason) {
  FakeTree t = Conversation();
  const DenyCase& c = GetParam();
  absl::StatusOr<ConfinedPath> p = ConfinePath(t, kRoots, kWorkdir, c.path, c.intent);
  ASSERT_FALSE(p.ok()) << c.path << " -> " << p->resolved;
  EXPECT_EQ(p.status().code(), c.code) << c.path << ": " << p.status();
  EXPECT_NE(p.status().message().find(c.message_part), std::string::npos)
      << c.path << ": " << p.status();
  // Nothing outside the roots (or on the way down to them) is ever looked at.
  for (const std::string& asked : t.asked()) {
    EXPECT_TRUE(asked.rfind("/etc/", 0) != 0 && asked.rfind("/root/", 0) != 0)
        << c.path << " probed " << asked;
  }
}

INSTANTIATE_TEST_SUITE_P(
    PathConfinement, Refuses,
    testing::ValuesIn(std::vector<DenyCase>{
        {"/etc/passwd", PathIntent::kRead, StatusCode::kPermissionDenied, "outside"},
        {"/etc/missing", PathIntent::kRead, StatusCode::kPermissionDenied, "outside"},
        {"/root/.ssh/authorized_keys", PathIntent::kWrite, StatusCode::kPermissionDenied,
         "outside"},
        {"../../../../etc/passwd", PathIntent::kRead, StatusCode::kPermissionDenied, "outside"},
        {"..", PathIntent::kRead, StatusCode::kPermissionDenied, "outside"},
        {"/", PathIntent::kRead, StatusCode::kPermissionDenied, "outside"},
        {"etc_link/passwd", PathIntent::kRead, StatusCode::kPermissionDenied, "symbolic link"},
        {"passwd", PathIntent::kRead, StatusCode::kPermissionDenied, "etc/passwd"},
        {"passwd", PathIntent::kWrite, StatusCode::kPermissionDenied, "symbolic link"},
        {"ssh/id_ed25519", PathIntent::kRead, StatusCode::kPermissionDenied, "symbolic link"},
        {"up/etc/passwd", PathIntent::kRead, StatusCode::kPermissionDenied, "outside"},
        {"root/etc/passwd", PathIntent::kRead, StatusCode::kPermissionDenied, "outside"},
        // Out through a symlink and back in: still refused.
        {"etc_link/../c/agents/a1/work/src/main.cc", PathIntent::kRead,
         StatusCode::kPermissionDenied, "symbolic link"},
        // A sibling agent's directory is not a root.
        {"sibling/notes.md", PathIntent::kRead, StatusCode::kPermissionDenied, "outside"},
        {"/c/agents/a2/work/notes.md", PathIntent::kWrite, StatusCode::kPermissionDenied,
         "outside"},
        {"dangling_out", PathIntent::kWrite, StatusCode::kPermissionDenied, "symbolic link"},
        {"/s/att/spec.pdf", PathIntent::kWrite, StatusCode::kPermissionDenied, "only read"},
        {"/s/att/new.txt", PathIntent::kWrite, StatusCode::kPermissionDenied, "only read"},
        {"missing.txt", PathIntent::kRead, StatusCode::kNotFound, "does not exist"},
        {"new/../../../../etc/passwd", PathIntent::kWrite, StatusCode::kInvalidArgument,
         "does not exist"},
        {"src/main.cc/x", PathIntent::kRead, StatusCode::kFailedPrecondition, "not a directory"},
        {"loop_a", PathIntent::kRead, StatusCode::kFailedPrecondition, "symbolic links"},
        {"", PathIntent::kRead, StatusCode::kInvalidArgument, "empty"},
        {std::string("a\0b", 3), PathIntent::kRead, StatusCode::kInvalidArgument, "NUL"},
        {std::string(5000, 'a'), PathIntent::kRead, StatusCode::kInvalidArgument, "bytes"},
    }));

TEST(ConfinePath, RootsSpelledThroughSymlinks) {
  FakeTree t;
  t.Link("/tmp", "private/tmp")
      .Dir("/private")
      .Dir("/private/tmp")
      .Dir("/private/tmp/w")
      .File("/private/tmp/w/f");
  std::vector<ConfinementRoot> roots = {{"/tmp/w", true}};
  for (const char* path : {"f", "/tmp/w/f", "/private/tmp/w/f"}) {
    absl::StatusOr<ConfinedPath> p = ConfinePath(t, roots, "/tmp/w", path, PathIntent::kRead);
    ASSERT_TRUE(p.ok()) << path << ": " << p.status();
    EXPECT_EQ(p->relative, "f");
    EXPECT_EQ(p->resolved, "/private/tmp/w/f");
  }
  EXPECT_FALSE(ConfinePath(t, roots, "/tmp/w", "/tmp/x", PathIntent::kRead).ok());
}

TEST(ConfinePath, InnermostRootDecidesWritability) {
  FakeTree t;
  t.Dir("/c").Dir("/c/att").File("/c/att/a").File("/c/b");
  std::vector<ConfinementRoot> roots = {{"/c", true}, {"/c/att", false}};
  EXPECT_TRUE(ConfinePath(t, roots, "/c", "b", PathIntent::kWrite).ok());
  absl::StatusOr<ConfinedPath> p = ConfinePath(t, roots, "/c", "att/a", PathIntent::kRead);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->root_index, 1u);
  EXPECT_EQ(ConfinePath(t, roots, "/c", "att/a", PathIntent::kWrite).status().code(),
            StatusCode::kPermissionDenied);
}

TEST(ConfinePath, RejectsBadRoots) {
  FakeTree t = Conversation();
  EXPECT_EQ(ConfinePath(t, {}, kWorkdir, "x", PathIntent::kRead).status().code(),
            StatusCode::kInvalidArgument);
  std::vector<ConfinementRoot> slash = {{"/", true}};
  EXPECT_EQ(ConfinePath(t, slash, "/", "x", PathIntent::kRead).status().code(),
            StatusCode::kInvalidArgument);
  // Nor one that resolves there (found by path_confinement_fuzz: it also got its relative
  // paths wrong, "/repos/x" below "/" as "epos/x").
  t.Link("/c/up", "../..");
  std::vector<ConfinementRoot> up = {{"/c/up", true}};
  EXPECT_EQ(ConfinePath(t, up, "/c/up", "repos/x", PathIntent::kRead).status().code(),
            StatusCode::kInvalidArgument);
  std::vector<ConfinementRoot> relative = {{"c/work", true}};
  EXPECT_EQ(ConfinePath(t, relative, kWorkdir, "x", PathIntent::kRead).status().code(),
            StatusCode::kInvalidArgument);
  // A working directory outside every root: relative paths cannot start there.
  EXPECT_EQ(ConfinePath(t, kRoots, "/etc", "passwd", PathIntent::kRead).status().code(),
            StatusCode::kFailedPrecondition);
}

// The same rules over a real temporary tree, through the launcher's lstat/readlink view.
class RealTree : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/confine_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    Mkdir("/work");
    Mkdir("/work/src");
    Mkdir("/repos");
    Mkdir("/outside");
    Write("/work/src/a.txt");
    Write("/outside/secret");
    Symlink(base_ + "/outside", "/work/abs_out");
    Symlink("../outside/secret", "/work/rel_out");
    Symlink("../repos", "/work/repos_link");
    Symlink("src/b.txt", "/work/new_in");
    Symlink("../outside/new", "/work/new_out");
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + base_).c_str()), 0); }

  void Mkdir(const std::string& p) { ASSERT_EQ(mkdir((base_ + p).c_str(), 0755), 0); }
  void Write(const std::string& p) { std::ofstream(base_ + p) << "x"; }
  void Symlink(const std::string& target, const std::string& link) {
    ASSERT_EQ(symlink(target.c_str(), (base_ + link).c_str()), 0);
  }
  absl::StatusOr<ConfinedPath> Confine(const std::string& path, PathIntent intent) {
    std::vector<ConfinementRoot> roots = {{base_ + "/work", true}, {base_ + "/repos", true}};
    return ConfinePath(view_, roots, base_ + "/work", path, intent);
  }

  std::string base_;
  RealHostView view_;
};

TEST_F(RealTree, SymlinkTricks) {
  EXPECT_EQ(Confine("src/a.txt", PathIntent::kRead)->relative, "src/a.txt");
  EXPECT_EQ(Confine("repos_link/new.c", PathIntent::kWrite)->root_index, 1u);
  EXPECT_EQ(Confine("new_in", PathIntent::kWrite)->relative, "src/b.txt");
  for (const char* path :
       {"abs_out/secret", "rel_out", "new_out", "../outside/secret", "src/../../outside/secret"}) {
    for (PathIntent intent : {PathIntent::kRead, PathIntent::kWrite}) {
      absl::StatusOr<ConfinedPath> p = Confine(path, intent);
      EXPECT_EQ(p.status().code(), StatusCode::kPermissionDenied) << path;
    }
  }
  EXPECT_EQ(Confine(base_ + "/outside/secret", PathIntent::kRead).status().code(),
            StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace ccsandbox::policy
