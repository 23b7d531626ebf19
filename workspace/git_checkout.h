// What a registered repository is on disk: the root of a git working tree and where its git
// directories live, so it can be cloned without reading anything git would not.
//
//   absl::StatusOr<GitCheckout> checkout = InspectCheckout("repositories[0].path", path);
//   if (!checkout.ok()) return checkout.status();  // INVALID_ARGUMENT naming the field
//   CloneCheckout(*checkout, destination);
//
// A main checkout has a `.git` directory; a linked worktree (`git worktree add`, or a
// `--separate-git-dir` checkout) has a `.git` file "gitdir: X" naming its private git directory,
// whose `commondir` file (relative to it) names the shared repository. Bare repositories and a
// `.git` symlink are refused: neither has a working tree we could clone without following it.
#ifndef CCSANDBOX_WORKSPACE_GIT_CHECKOUT_H_
#define CCSANDBOX_WORKSPACE_GIT_CHECKOUT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::workspace {

struct GitCheckout {
  enum class Kind { kMain, kLinkedWorktree };
  std::string root;  // realpath of the working tree
  Kind kind = Kind::kMain;
  // root/.git, or the linked worktree's private git dir (from the .git file's "gitdir:"), real.
  std::string git_dir;
  // == git_dir for kMain (and for a .git file without `commondir`); the shared repository dir
  // for kLinkedWorktree (git_dir/commondir, relative to git_dir), real.
  std::string common_dir;
};

// INVALID_ARGUMENT naming `field` when `path` is not absolute and normalised, does not exist, or
// is not the root of a git checkout: no .git; .git neither a directory with HEAD nor a
// "gitdir: X" file pointing at a directory with HEAD (whose `commondir`, if any, names a
// directory with `objects`); and when the git directories it points at are not owned by the
// owner of the working tree (git's safe.directory rule: a pointer into another user's
// repository would have a privileged caller clone what that user's files hold).
absl::StatusOr<GitCheckout> InspectCheckout(absl::string_view field, const std::string& path);

}  // namespace ccsandbox::workspace

#endif  // CCSANDBOX_WORKSPACE_GIT_CHECKOUT_H_
