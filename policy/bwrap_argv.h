// LaunchPlan -> bwrap argv: an ordered list of mount and namespace operations, one per
// rule, so a reviewer can read the sandbox the way bubblewrap will build it.
//
//   RenderBwrapArgv(plan, config, host_view) ->
//     bwrap <namespaces> <system base, read-only> <proc, dev, tmp> <binds, parents first>
//           <protected paths read-only> --chdir <workdir> -- <argv...>
#ifndef CCSANDBOX_POLICY_BWRAP_ARGV_H_
#define CCSANDBOX_POLICY_BWRAP_ARGV_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/host_view.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::policy {

struct BwrapConfig {
  std::string bwrap_path = "bwrap";
  // Read-only system base. Symlinks (merged-/usr /bin -> usr/bin) are recreated as symlinks.
  std::vector<std::string> system_ro_dirs;
};

// The launcher's default system base: /usr, /bin, /sbin, /lib*, /etc.
std::vector<std::string> DefaultSystemRoDirs();

absl::StatusOr<std::vector<std::string>> RenderBwrapArgv(const v1::LaunchPlan& plan,
                                                         const BwrapConfig& config,
                                                         const HostView& host);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_BWRAP_ARGV_H_
