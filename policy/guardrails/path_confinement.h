// Path confinement for the built-in harness's in-process file tools (spec: "Path confinement in
// the built-in harness's file tools", "Where these boundaries are weak"): read, write, edit,
// apply_patch, search, find and search_files resolve every path against the run's working
// directory and the shared roots (the conversation's repos/, the space's attachments directory)
// and refuse everything outside them. This check is the boundary those tools rely on — no
// sandbox profile reaches them.
//
//   std::vector<ConfinementRoot> roots = {{"/data/c1/agents/a1/work", true},
//                                         {"/data/c1/repos", true},
//                                         {"/data/s1/attachments", false}};
//   absl::StatusOr<ConfinedPath> p =
//       ConfinePath(host_view, roots, "/data/c1/agents/a1/work", "src/main.cc",
//       PathIntent::kWrite);
//   // then, not before: broker/confined_open.h
//   //   OpenConfined(root_fds[p->root_index], p->relative, O_WRONLY | O_CREAT, 0644)
//
// No "check, then use the path" API: the result is a root index and a path relative to that
// root, meant for openat2(RESOLVE_BENEATH) on a directory fd the caller opened once per root.
// The kernel then refuses any escape (a symlink or `..` swapped in after this check), so the
// check here gives the agent a precise refusal and the open makes it hold.
//
// How a path resolves (like the kernel, on the file-system view given):
//  - relative paths start at the working directory; absolute ones are taken as they are and
//    accepted only if they lead inside a root;
//  - `..` and symlinks are resolved component by component (a symlink's `..` applies to where it
//    points); a step that leaves every root — other than walking down from `/` to a root, or
//    up to the directory that holds two roots — is refused, so a symlink inside the worktree
//    that points outside is refused even when the path would come back in;
//  - for kWrite the last components may not exist yet (a new file, new directories); after the
//    first missing component only plain names may follow;
//  - the result must lie inside a root (the innermost one when roots nest); kWrite into a
//    read-only root is refused.
// Errors: INVALID_ARGUMENT (empty path, NUL, bad roots: relative, unnormalised, or "/" as
// written or resolved), PERMISSION_DENIED (outside the roots,
// read-only root), NOT_FOUND (kRead of something missing), FAILED_PRECONDITION (a file used as
// a directory, symlink loops).
#ifndef CCSANDBOX_POLICY_GUARDRAILS_PATH_CONFINEMENT_H_
#define CCSANDBOX_POLICY_GUARDRAILS_PATH_CONFINEMENT_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/host_view.h"

namespace ccsandbox::policy {

struct ConfinementRoot {
  std::string path;  // absolute and normalised (no `.`/`..`/`//`); may itself contain symlinks
  bool writable = true;
};

enum class PathIntent {
  kRead,   // read, search, find: the path must exist
  kWrite,  // write, edit, apply_patch: the path, or its last components, may not exist yet
};

struct ConfinedPath {
  size_t root_index = 0;  // into the roots given to ConfinePath
  // Below that root with symlinks and `..` resolved: no leading '/', no `..`; "." for the root.
  std::string relative;
  std::string resolved;  // the absolute resolved path, for messages and logs
  bool exists = true;    // false when kWrite names something not created yet
};

absl::StatusOr<ConfinedPath> ConfinePath(const HostView& fs,
                                         absl::Span<const ConfinementRoot> roots,
                                         absl::string_view workdir, absl::string_view requested,
                                         PathIntent intent);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_GUARDRAILS_PATH_CONFINEMENT_H_
