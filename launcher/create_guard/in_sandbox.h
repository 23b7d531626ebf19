// The sandbox side of create-time enforcement of the filename-pattern denies,
// run by sandbox_shim in the process that execs the command, right before exec:
//
//   sandbox_shim --create-guard=FD [--free-create=DIR ...] [--writable=DIR ...] [...] -- cmd
//
//   CreateGuardShimConfig config = ParseShimArgs(...)->args.create_guard;  (shim_args.h)
//   child: if (!ApplyCreateGuard(config).ok()) _exit(126);  exec(cmd)
//
// ApplyCreateGuard checks each free dir against the live mount table (it must
// be a tmpfs mount point with no read-write mount beneath it, and overlap no
// --writable dir), sets PR_SET_NO_NEW_PRIVS, applies Landlock (creation only
// beneath the free dirs), installs the create filter and sends its notify fd to
// the launcher over FD, then closes both. Any failure leaves the command
// unstarted: it never runs without the guard it was promised.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_IN_SANDBOX_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_IN_SANDBOX_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "launcher/shim/shim_args.h"

namespace ccsandbox::launcher {

// OK when each free dir is safe to let the command create in unchecked, given
// the mount table in `mountinfo` (the text of /proc/self/mountinfo). Pure;
// exposed for tests.
absl::Status CheckFreeDirs(const std::vector<std::string>& free_dirs,
                           const std::vector<std::string>& writable_dirs,
                           absl::string_view mountinfo, bool allow_writable_beneath = false);

// `program`: the create filter's BPF (CreateFilterProgram), when the caller built it once for
// many commands (a warm sandbox's init); null builds it here.
absl::Status ApplyCreateGuard(const CreateGuardShimConfig& config,
                              const std::string* program = nullptr);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_IN_SANDBOX_H_
