// Finds, on the host, what the deny sets of one plan apply to: secret names in any bound
// tree, mandatory deny-write names at any depth under writable mounts (not inside runner
// state dirs, which the operator declared writable), existing names matching the
// filename-pattern denies under any writable mount, protected-path and system-secret globs
// expanded, and the user's home directories. Walks without following symlinks.
#ifndef CCSANDBOX_BROKER_DENY_SCAN_H_
#define CCSANDBOX_BROKER_DENY_SCAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/deny_sets.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::broker {

struct ScanRequest {
  std::vector<v1::PlanMount> mounts;
  std::vector<std::string> runner_state_dirs;
  std::vector<std::string> protected_paths;  // globs allowed
  std::vector<std::string> home_dirs;
  // Filename-pattern denies (writeDenyPatterns): existing files, directories and links with a
  // matching name anywhere under a writable mount are made read-only at launch.
  std::vector<std::string> filename_deny_patterns;
  // A tree larger than this is refused (RESOURCE_EXHAUSTED) rather than half-scanned.
  size_t max_entries = 2'000'000;
};

absl::StatusOr<policy::DenyScan> ScanForDenyPaths(const ScanRequest& request);

// The current user's home directories: passwd's and $HOME, de-duplicated.
std::vector<std::string> CurrentHomeDirs();

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_DENY_SCAN_H_
