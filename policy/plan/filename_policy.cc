#include "policy/plan/filename_policy.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/plan/deny_sets.h"
#include "policy/plan/spec_validation.h"

namespace ccsandbox::policy {

std::string FilenameEnforcementNote(bool known, bool available, const std::string& reason) {
  if (!known) {
    return absl::StrCat("filename-pattern denies: launcher not reachable yet (", reason,
                        "); writable Linux runs that need them are refused until it answers");
  }
  if (available) {
    return absl::StrCat("filename-pattern denies (.env, *.key, *.pem) ", reason);
  }
  return absl::StrCat("filename-pattern denies NOT enforceable here (", reason,
                      "): writable Linux runs that need them are refused");
}

bool HasWritableMount(const v1::SandboxSpec& spec) {
  if (!spec.runner_state_dirs().empty()) return true;
  absl::StatusOr<Mode> mode = ParseMode(spec.mode());
  if (!mode.ok() || ModeIsReadOnly(*mode)) return false;
  for (const v1::SandboxBindMount& bind : spec.bind_mounts()) {
    if (!bind.read_only()) return true;
  }
  return false;
}

absl::StatusOr<FilenamePolicyDecision> DecideFilenamePolicy(const v1::SandboxSpec& spec,
                                                            v1::SandboxBackend backend,
                                                            bool create_time_enforcement) {
  FilenamePolicyDecision decision;
  if (backend != v1::SANDBOX_BACKEND_NATIVE) {
    decision.note = "not applicable: backend none enforces no file rules";
    return decision;
  }
  const std::vector<std::string> patterns = EffectiveFilenameDenyPatterns(spec);
  const bool writable = HasWritableMount(spec);
  if (patterns.empty()) {
    decision.weakened = spec.has_write_deny_patterns();
    decision.note =
        "WEAKENED by request: writeDenyPatterns is empty, so new .env, *.key and *.pem files "
        "may be created in writable binds";
    if (!writable) return decision;
    // The opt-out covers the filename patterns only: start-up files, git metadata and keys
    // are still refused at creation, so without the guard nothing writable may run.
    if (!create_time_enforcement) {
      return absl::FailedPreconditionError(
          "denyWriteNames: the Linux native backend cannot refuse NEW shell start-up files, git "
          "hooks and config, keys and the other names the host runs or trusts inside writable "
          "bind mounts without create-time enforcement, so this run is refused (the "
          "writeDenyPatterns opt-out does not cover them). Use a read-only mode (review, plan, "
          "orchestrate), or a launcher that enforces creation-time denies");
    }
    decision.create_guard = true;
    return decision;
  }
  if (!writable) {
    decision.note = "enforced: nothing is writable";
    return decision;
  }
  if (create_time_enforcement) {
    decision.note = absl::StrCat("enforced at creation time: ", absl::StrJoin(patterns, ", "));
    decision.create_guard = true;
    decision.create_guard_patterns = patterns;
    return decision;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "writeDenyPatterns: the Linux native backend cannot forbid creating NEW files named ",
      absl::StrJoin(patterns, ", "),
      " inside writable bind mounts (bubblewrap can only shadow existing paths), so this run is "
      "refused rather than run with a silently weaker policy. Use a read-only mode (review, "
      "plan, orchestrate), or pass \"writeDenyPatterns\": {\"patterns\": []} to accept the "
      "weaker policy explicitly"));
}

}  // namespace ccsandbox::policy
