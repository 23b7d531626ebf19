#include "policy/plan/spec_validation.h"

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "policy/mode.h"
#include "policy/plan/input_limits.h"
#include "policy/plan/push_spec.h"

namespace ccsandbox::policy {
namespace {

absl::Status CheckId(absl::string_view field, absl::string_view id, bool required) {
  if (id.empty()) {
    return required ? absl::InvalidArgumentError(absl::StrCat(field, ": is required"))
                    : absl::OkStatus();
  }
  if (id.size() > 128) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": longer than 128 characters"));
  }
  for (char c : id) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.' && c != ':') {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": '", id, "' may only contain letters, digits, '-', '_', '.', ':'"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPathList(absl::string_view field,
                           const google::protobuf::RepeatedPtrField<std::string>& paths,
                           bool allow_globs) {
  for (int i = 0; i < paths.size(); ++i) {
    const std::string name = absl::StrCat(field, "[", i, "]");
    if (allow_globs && IsGlob(paths[i]) && !paths[i].empty() && paths[i][0] == '/') continue;
    if (absl::Status s = CheckNormalizedAbsolute(name, paths[i]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSpec(const v1::SandboxSpec& spec, v1::SandboxBackend backend) {
  // First: the rules below quote what they refuse, so they only ever see bounded input.
  if (absl::Status s = CheckSpecLimits(spec); !s.ok()) return s;
  if (absl::Status s = CheckId("sessionId", spec.session_id(), true); !s.ok()) return s;
  if (absl::Status s = CheckId("workspaceId", spec.workspace_id(), false); !s.ok()) return s;
  if (spec.has_agent_id()) {
    if (absl::Status s = CheckId("agentId", spec.agent_id(), false); !s.ok()) return s;
  }
  if (absl::StatusOr<Mode> mode = ParseMode(spec.mode()); !mode.ok()) return mode.status();
  for (int i = 0; i < spec.bind_mounts_size(); ++i) {
    const v1::SandboxBindMount& bind = spec.bind_mounts(i);
    const std::string field = absl::StrCat("bindMounts[", i, "]");
    if (absl::Status s = CheckNormalizedAbsolute(field + ".hostPath", bind.host_path()); !s.ok()) {
      return s;
    }
    if (bind.host_path() == "/") {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".hostPath: binding '/' would expose the whole host"));
    }
    if (!bind.guest_path().empty()) {
      if (absl::Status s = CheckNormalizedAbsolute(field + ".guestPath", bind.guest_path());
          !s.ok()) {
        return s;
      }
      if (backend == v1::SANDBOX_BACKEND_NATIVE && bind.guest_path() != bind.host_path()) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".guestPath: ", QuoteInput(bind.guest_path()),
                         " differs from hostPath ", QuoteInput(bind.host_path()),
                         "; the native backend mounts every path at its host "
                         "location"));
      }
    }
  }
  if (spec.has_guest_workdir()) {
    if (absl::Status s = CheckNormalizedAbsolute("guestWorkdir", spec.guest_workdir()); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CheckPathList("protectedPaths", spec.protected_paths(), true); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckPathList("runnerStateDirs", spec.runner_state_dirs(), false); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckPathList("execGrantRoots", spec.exec_grant_roots(), false); !s.ok()) {
    return s;
  }
  return ValidatePushSpec(spec, backend);
}

}  // namespace ccsandbox::policy
