// Opens files for the in-process file tools strictly below a root directory, with the kernel
// enforcing it: openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS refuses `..`, absolute
// and escaping symlinks and /proc magic links at open time, so a symlink swapped in after
// policy::ConfinePath checked the path still cannot lead outside the root.
//
//   absl::StatusOr<UniqueFd> root = OpenRoot("/data/c1/agents/a1/work");  // once per run
//   absl::StatusOr<policy::ConfinedPath> p = policy::ConfinePath(view, roots, workdir, path,
//                                                                policy::PathIntent::kWrite);
//   if (!p->exists) MakeDirsConfined(root->get(), Dirname(p->relative));
//   absl::StatusOr<UniqueFd> fd =
//       OpenConfined(root->get(), p->relative, O_WRONLY | O_CREAT | O_TRUNC, 0644);
//
// Linux 5.6 or later; on older kernels every call fails UNIMPLEMENTED rather than opening
// without confinement.
#ifndef CCSANDBOX_BROKER_CONFINED_OPEN_H_
#define CCSANDBOX_BROKER_CONFINED_OPEN_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/unique_fd.h"

namespace ccsandbox::broker {

// An O_PATH directory fd for a confinement root (the root's own path is configuration and may
// contain symlinks).
absl::StatusOr<UniqueFd> OpenRoot(const std::string& path);

// openat2(root_fd, relative, flags | O_CLOEXEC, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS).
// `relative` must not be absolute; `mode` is used with O_CREAT / O_TMPFILE. An escape is
// PERMISSION_DENIED, a missing file NOT_FOUND.
absl::StatusOr<UniqueFd> OpenConfined(int root_fd, absl::string_view relative, int flags,
                                      mode_t mode = 0);

// mkdir -p below the root, one component at a time with the same resolution rules, so a
// symlink planted on the way cannot make it create directories outside.
absl::Status MakeDirsConfined(int root_fd, absl::string_view relative_dir, mode_t mode = 0755);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CONFINED_OPEN_H_
