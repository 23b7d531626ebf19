// Removes a directory tree (a conversation's worktrees, a half-provisioned clone) without ever
// leaving it: every step is relative to an open directory fd, nothing is followed.
//
//   if (absl::Status gone = RemoveTree("/var/lib/ccsandbox/conversations/c1"); !gone.ok()) ...
//
// - A symlink anywhere (the top included) is unlinked; its target is untouched.
// - Read-only (or unreadable) directories of our own are made 0700 before they are emptied.
// - A mount point inside the tree (a sandbox's bind left behind) is not entered: it would lead
//   into another tree. That is FAILED_PRECONDITION; what was removed before stays removed.
// - Any depth (an agent can build a chain of thousands of directories in what it writes): the
//   walk holds at most 256 directories open, and moves what lies deeper up into the top, to be
//   emptied from there.
// - A missing `path` is OK. `path` must be absolute, normalised and not "/" (INVALID_ARGUMENT).
#ifndef CCSANDBOX_WORKSPACE_REMOVE_TREE_H_
#define CCSANDBOX_WORKSPACE_REMOVE_TREE_H_

#include <string>

#include "absl/status/status.h"

namespace ccsandbox::workspace {

absl::Status RemoveTree(const std::string& path);

}  // namespace ccsandbox::workspace

#endif  // CCSANDBOX_WORKSPACE_REMOVE_TREE_H_
