#include "workspace/git_shared_paths.h"

#include "absl/strings/match.h"

namespace ccsandbox::workspace {
namespace {

struct GitPathRow {
  absl::string_view path;
  bool is_dir;  // the row covers everything below the path too
  bool shared;
};

// git 2.39 path.c common_list: the longest matching row decides; no row means per worktree.
constexpr GitPathRow kGitPaths[] = {
    {"branches", true, true},
    {"common", true, true},
    {"hooks", true, true},
    {"info", true, true},
    {"info/sparse-checkout", false, false},
    {"logs", true, true},
    {"logs/HEAD", false, false},
    {"logs/refs/bisect", true, false},
    {"logs/refs/rewritten", true, false},
    {"logs/refs/worktree", true, false},
    {"lost-found", true, true},
    {"objects", true, true},
    {"refs", true, true},
    {"refs/bisect", true, false},
    {"refs/rewritten", true, false},
    {"refs/worktree", true, false},
    {"remotes", true, true},
    {"worktrees", true, true},
    {"rr-cache", true, true},
    {"svn", true, true},
    {"config", false, true},
    {"gc.pid", false, true},
    {"packed-refs", false, true},
    {"shallow", false, true},
};

bool Matches(const GitPathRow& row, absl::string_view relative) {
  if (relative == row.path) return true;
  return row.is_dir && absl::StartsWith(relative, row.path) && relative.size() > row.path.size() &&
         relative[row.path.size()] == '/';
}

}  // namespace

bool IsSharedGitPath(absl::string_view relative) {
  const GitPathRow* best = nullptr;
  for (const GitPathRow& row : kGitPaths) {
    if (Matches(row, relative) && (best == nullptr || row.path.size() > best->path.size())) {
      best = &row;
    }
  }
  return best != nullptr && best->shared;
}

}  // namespace ccsandbox::workspace
