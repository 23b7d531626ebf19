// What the launcher hands to both sides of create-time enforcement of the
// filename-pattern denies for one run, derived from the run's mounts. Pure.
//
//   std::vector<GuardMount> mounts = GuardMountsOf(plan);
//   shim:        ShimGuardDirsOf(mounts), rendered as its arguments by the launcher
//                (launcher/shim/shim_args.h): --free-create=/tmp --writable=... usually
//   supervisor:  the same FreeCreateDirs(mounts), the patterns, and HostPathFor() for
//                violation targets.
//
// Threat the free-dir rule stops: the shim's Landlock layer lets the command
// create ANY name beneath a free dir without asking the supervisor. That is
// harmless only while nothing beneath it outlives the sandbox, i.e. no writable
// bind of a host directory is, contains or lies under a free dir.
#ifndef CCSANDBOX_POLICY_PLAN_CREATE_GUARD_PLAN_H_
#define CCSANDBOX_POLICY_PLAN_CREATE_GUARD_PLAN_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::policy {

struct GuardMount {
  std::string guest;  // normalised absolute path inside the sandbox
  std::string host;   // normalised absolute path on the host
  bool writable = false;
  // A runner state dir: the trusted-name rules do not apply beneath it.
  bool trusted_exempt = false;
};

// A plan's mounts as the guard sees them (writable = not read-only).
std::vector<GuardMount> GuardMountsOf(const v1::LaunchPlan& plan);

// The sandbox's private tmpfs at /tmp (bwrap --tmpfs /tmp), unless a writable
// mount is /tmp, lies beneath it or contains it: then none (every creation is
// then decided one by one).
std::vector<std::string> FreeCreateDirs(const std::vector<GuardMount>& mounts);

// The dirs the shim's half of the guard is told about, each list in mount order.
struct ShimGuardDirs {
  std::vector<std::string> free_create;  // FreeCreateDirs(mounts)
  // Every writable mount's guest path: the shim refuses to start when a free dir is not a
  // tmpfs or overlaps one of them, so a launcher bug cannot silently open a hole.
  std::vector<std::string> writable;
  // Where only the command's own Unix sockets may be created unchecked.
  std::vector<std::string> free_sockets;
};
ShimGuardDirs ShimGuardDirsOf(const std::vector<GuardMount>& mounts);

// The host spelling of a guest path through the mount that contains it most
// closely; the guest path unchanged when no mount contains it (then it lives in
// the sandbox's own tmpfs).
std::string HostPathFor(absl::string_view guest_path, const std::vector<GuardMount>& mounts);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_CREATE_GUARD_PLAN_H_
