#include "policy/plan/path_spellings.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/real_host_view.h"
#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

// A real tree with symlinks: <root>/real/{.ssh,checkout}, <root>/link -> real,
// <root>/tmp -> private/tmp (the macOS shape), <root>/dangling -> nowhere.
class SpellingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/spellings.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    char resolved[PATH_MAX];
    ASSERT_NE(realpath(tmpl, resolved), nullptr);
    root_ = resolved;
    for (const char* dir : {"/real", "/real/.ssh", "/real/checkout", "/private", "/private/tmp",
                            "/private/tmp/work"}) {
      ASSERT_EQ(mkdir((root_ + dir).c_str(), 0755), 0);
    }
    ASSERT_EQ(symlink("real", (root_ + "/link").c_str()), 0);
    ASSERT_EQ(symlink("private/tmp", (root_ + "/tmp").c_str()), 0);
    ASSERT_EQ(symlink("nowhere", (root_ + "/dangling").c_str()), 0);
  }
  void TearDown() override { system(("rm -rf " + root_).c_str()); }
  std::string root_;
  RealPathResolver resolver_;
};

TEST_F(SpellingsTest, LiteralAndResolvedSpellings) {
  struct Case {
    std::string path;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      // Through a symlinked directory: both spellings.
      {root_ + "/link/.ssh", {root_ + "/link/.ssh", root_ + "/real/.ssh"}},
      {root_ + "/tmp/work", {root_ + "/tmp/work", root_ + "/private/tmp/work"}},
      // Already resolved: one spelling.
      {root_ + "/real/checkout", {root_ + "/real/checkout"}},
      // Does not resolve: kept as written.
      {root_ + "/dangling/x", {root_ + "/dangling/x"}},
      {root_ + "/link/missing", {root_ + "/link/missing"}},
      // Globs are left untouched.
      {root_ + "/link/*.pem", {root_ + "/link/*.pem"}},
      {root_ + "/link/?", {root_ + "/link/?"}},
  };
  for (const Case& c : cases) EXPECT_EQ(Spellings(c.path, resolver_), c.want) << c.path;
}

TEST_F(SpellingsTest, AllSpellingsDeduplicatesInOrder) {
  std::vector<std::string> got = AllSpellings(
      {root_ + "/link/.ssh", root_ + "/real/.ssh", root_ + "/real/checkout"}, resolver_);
  std::vector<std::string> want = {root_ + "/link/.ssh", root_ + "/real/.ssh",
                                   root_ + "/real/checkout"};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace ccsandbox::policy
