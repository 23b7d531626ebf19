// The fixed deny sets of the Linux native backend (spec: deny-read secrets, mandatory
// deny-write paths) and the filename patterns no new file may match. Each entry is
// documented with its reason in deny_sets.cc and docs/deny-sets.md.
#ifndef CCSANDBOX_POLICY_PLAN_DENY_SETS_H_
#define CCSANDBOX_POLICY_PLAN_DENY_SETS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/host_view.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

// Secret names hidden wherever they appear in ANY bound tree (deny-read), e.g. ".ssh".
const std::vector<std::string>& SecretNames();
// Secret paths relative to the user's home, hidden when a bind contains them
// (deny-read), e.g. ".config/gh".
const std::vector<std::string>& HomeSecretPaths();
// Secrets of the read-only system base (globs allowed), hidden with /dev/null.
const std::vector<std::string>& SystemSecretPaths();
// The mandatory deny-write set (shell start-up files, git metadata, agent configuration and
// the rest of what the host runs or trusts) is policy/trusted_names.h.

// True when `path` ends with the components of `relative` (".git/hooks" matches
// "/w/a/.git/hooks", not "/w/a/x.git/hooks").
bool EndsWithComponents(absl::string_view path, absl::string_view relative);

// What the broker found on the host for one plan (I/O lives in broker/deny_scan).
// What a bind's host path named at Launch: every run binds exactly that object, so a path
// swapped later (for a symlink, or another directory) cannot bring a tree the scan never saw.
struct FileIdentity {
  uint64_t dev = 0;
  uint64_t ino = 0;
};

struct DenyScan {
  std::vector<std::string> secrets;              // SecretNames found in any bound tree
  std::vector<std::string> deny_write;           // trusted names found under writable binds
  std::vector<std::string> protected_paths;      // spec.protectedPaths with globs expanded
  std::vector<std::string> system_secrets;       // SystemSecretPaths with globs expanded
  std::vector<std::string> home_dirs;            // the user's home directories
  std::map<std::string, FileIdentity> bind_ids;  // each scanned mount's root, as resolved
  // Paths no new name may be created at or beneath (what git configs name, existing or not).
  std::vector<std::string> creation_denied;
};

struct DenyPaths {
  std::vector<std::string> read;                 // hidden inside
  std::vector<std::string> write;                // read-only and pinned inside
  std::map<std::string, FileIdentity> bind_ids;  // host path of each mount -> at Launch
  std::vector<std::string> creation_denied;      // refused at creation (both spellings)
};

// Both deny sets of a plan, every path in its literal and symlink-resolved spelling:
// read = secrets found + home secrets (SecretNames and HomeSecretPaths under each home) +
// system secrets; write = protected paths + mandatory deny-write paths found.
DenyPaths ResolveDenyPaths(const DenyScan& scan, const PathResolver& resolver);

// The standard dispatch filename patterns: .env, .env.*, *.key, *.pem.
const std::vector<std::string>& StandardFilenameDenyPatterns();

// The patterns a spec asks for: the standard set, plus any patterns the spec lists; none when
// the spec sets an empty list (the explicit opt-out).
std::vector<std::string> EffectiveFilenameDenyPatterns(const v1::SandboxSpec& spec);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_DENY_SETS_H_
