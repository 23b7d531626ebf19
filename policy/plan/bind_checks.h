// Where a bind may not lead, judged on the path a host path RESOLVES to (the caller opens
// or realpath()s it first), never on its spelling: a symlink to the launcher's socket
// directory is the socket directory.
//
//   ForbiddenDirs forbidden = ControlPlaneDirs();                 // / /proc /dev /sys
//   forbidden.push_back({"/run/ccsandbox", "the launcher's socket directory"});
//   absl::Status s = CheckResolvedBind("bindMounts[0].hostPath", "/w/link", resolved, forbidden);
//
// A bind that is, contains or lies inside a forbidden directory is INVALID_ARGUMENT naming
// the field, the spelling, what it resolves to and what it would expose; `/` may only not be
// bound itself (everything lies inside it).
#ifndef CCSANDBOX_POLICY_PLAN_BIND_CHECKS_H_
#define CCSANDBOX_POLICY_PLAN_BIND_CHECKS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

struct ForbiddenDir {
  std::string path;  // normalised, resolved
  std::string what;  // "the launcher's socket directory"
  // Set: a bind strictly inside `path` is allowed when this says so of its path relative to
  // `path` (the data directory: one conversation's repos/, one agent's directories); the
  // directory itself and what holds it stay refused.
  std::function<bool(absl::string_view relative)> bindable_below;
};
using ForbiddenDirs = std::vector<ForbiddenDir>;

// `/`, `/proc`, `/dev`, `/sys`: the host itself and its kernel interfaces.
ForbiddenDirs ControlPlaneDirs();

absl::Status CheckResolvedBind(absl::string_view field, absl::string_view spelled,
                               absl::string_view resolved, const ForbiddenDirs& forbidden);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_BIND_CHECKS_H_
