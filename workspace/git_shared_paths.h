// Which paths of a git directory belong to the repository (shared by all its worktrees) and
// which to one worktree (HEAD, index, logs/HEAD, ORIG_HEAD, MERGE_HEAD, rebase-merge/, ...):
// git's own table (path.c, common_list), as data. A linked worktree's standalone clone takes the
// shared paths from the common directory and the rest from the worktree's private git dir, so
// the main worktree's HEAD or in-progress merge never leaks into it.
//
//   IsSharedGitPath("objects/pack/x.pack") == true;   IsSharedGitPath("logs/HEAD") == false
#ifndef CCSANDBOX_WORKSPACE_GIT_SHARED_PATHS_H_
#define CCSANDBOX_WORKSPACE_GIT_SHARED_PATHS_H_

#include "absl/strings/string_view.h"

namespace ccsandbox::workspace {

// `relative` is a path inside a git directory ("refs/heads/main"), without a leading '/'. True
// when git reads and writes it in the common directory; false when it is per worktree
// (everything git's table does not name as common).
bool IsSharedGitPath(absl::string_view relative);

}  // namespace ccsandbox::workspace

#endif  // CCSANDBOX_WORKSPACE_GIT_SHARED_PATHS_H_
