// LaunchPlan -> bwrap argv: an ordered list of mount and namespace operations, one per
// rule, so a reviewer can read the sandbox the way bubblewrap will build it.
//
//   bwrap <namespaces, no capabilities> [--seccomp FD]
//         <system base, read-only>  <new /proc, minimal /dev, private /tmp>
//         <binds, parents first>
//         <deny-read: empty read-only dir or /dev/null over each secret under a mount>
//         <deny-write: each ancestor pinned as a mount point, the path itself read-only>
//         [<egress: proxy sockets and the shim bound in read-only>]
//         --chdir <workdir> -- [<shim> <the shim's arguments, ending in -->] <argv...>
//
// Deny paths outside every mount are invisible anyway and produce no operation; deny-write
// paths under a read-only mount are read-only already. A path under a hidden secret is
// skipped (it is not visible).
#ifndef CCSANDBOX_POLICY_PLAN_BWRAP_ARGV_H_
#define CCSANDBOX_POLICY_PLAN_BWRAP_ARGV_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/host_view.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::policy {

// Where bwrap binds each host object FROM. The launcher opens and checks every source, then
// attaches what it opened at a staging path of the run's private mount namespace; bwrap binds
// those, so a host path swapped for a symlink after the check cannot redirect a mount. Empty
// fields mean the host path itself (tests, and the rendering of a plan for display).
struct BindSources {
  std::vector<std::string> mounts;  // one per plan.mounts(i), in order
  std::string shim;
  std::string http_socket;
  std::string socks_socket;
  std::string push_socket;
  // Set by the launcher: where bwrap binds a path under the plan's mounts from (deny-write
  // paths and their pinned ancestors). It opens the path beneath the mount's opened root
  // without following any symlink and stages a clone of it, so a directory swapped for a
  // symlink after the look (by another session sharing the tree) cannot make bwrap bind
  // something else — e.g. the host's / as a pinned ancestor. An error fails the rendering,
  // but OUT_OF_RANGE: the path lies in a host mount inside the bound tree, which the sandbox
  // does not see (the tree is cloned without it), so there is nothing to pin or protect there.
  std::function<absl::StatusOr<std::string>(const std::string& host_path)> stage_beneath;
};

struct BwrapConfig {
  std::string bwrap_path = "bwrap";
  // Read-only system base. Symlinks (merged-/usr /bin -> usr/bin) are recreated as symlinks.
  std::vector<std::string> system_ro_dirs;
  // The fd number bwrap reads the seccomp BPF program from, when there is one.
  std::optional<int> seccomp_fd;
  // The sandbox_shim binary on the host; bound in read-only when a plan needs it (egress,
  // create guard).
  std::string shim_path;
  // The shim's arguments, up to and including the "--" before the command, as the launcher
  // rendered them (launcher/shim/shim_args.h) for this plan: its egress bridges and its create
  // guard (with the fd number, inherited by bwrap and passed on, of the shim's end of the
  // notify channel). Required when the plan needs the shim.
  std::vector<std::string> shim_args;
  BindSources sources;
  // The command runs as uid/gid 0 of its user namespace (a root caller, whose host uid is the
  // launcher's unprivileged sandbox uid); otherwise it keeps the caller's uid inside.
  bool inside_root = false;
  // A warm sandbox: the shim runs as its init (the shim arguments hold --init and no command).
  bool warm_init = false;
};

// The launcher's default system base: /usr, /bin, /sbin, /lib*, /etc.
std::vector<std::string> DefaultSystemRoDirs();

absl::StatusOr<std::vector<std::string>> RenderBwrapArgv(const v1::LaunchPlan& plan,
                                                         const BwrapConfig& config,
                                                         const HostView& host);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_BWRAP_ARGV_H_
