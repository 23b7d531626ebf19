#include "workspace/git_shared_paths.h"

#include "gtest/gtest.h"

namespace ccsandbox::workspace {
namespace {

struct Case {
  const char* path;
  bool shared;
};

TEST(GitSharedPathsTest, GitsTable) {
  constexpr Case kCases[] = {
      {"objects", true},
      {"objects/pack/pack-1.pack", true},
      {"refs/heads/main", true},
      {"refs/tags/v1", true},
      {"refs/bisect/bad", false},
      {"refs/worktree/x", false},
      {"refs/rewritten/onto", false},
      {"logs", true},
      {"logs/refs/heads/main", true},
      {"logs/HEAD", false},
      {"logs/refs/bisect/x", false},
      {"config", true},
      {"packed-refs", true},
      {"shallow", true},
      {"hooks/pre-commit", true},
      {"info/exclude", true},
      {"info/sparse-checkout", false},
      {"worktrees/wt/HEAD", true},
      {"HEAD", false},
      {"index", false},
      {"ORIG_HEAD", false},
      {"FETCH_HEAD", false},
      {"MERGE_HEAD", false},
      {"AUTO_MERGE", false},
      {"config.worktree", false},
      {"rebase-merge/head-name", false},
      {"sequencer/todo", false},
      {"configx", false},   // a file row matches only itself
      {"objectsx", false},  // a directory row matches below a '/' only
      {"config/x", false},
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(IsSharedGitPath(c.path), c.shared) << c.path;
  }
}

}  // namespace
}  // namespace ccsandbox::workspace
