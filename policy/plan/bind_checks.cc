#include "policy/plan/bind_checks.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"

namespace ccsandbox::policy {

ForbiddenDirs ControlPlaneDirs() {
  return {{"/", "the whole host"},
          {"/proc", "the host's processes and kernel tunables"},
          {"/dev", "the host's devices"},
          {"/sys", "the host's kernel objects"}};
}

absl::Status CheckResolvedBind(absl::string_view field, absl::string_view spelled,
                               absl::string_view resolved, const ForbiddenDirs& forbidden) {
  const std::string via =
      spelled == resolved ? std::string() : absl::StrCat(" (resolves to '", resolved, "')");
  if (resolved.empty() || resolved[0] != '/' || absl::EndsWith(resolved, " (deleted)")) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", spelled, "' does not resolve to a path on the host"));
  }
  for (const ForbiddenDir& dir : forbidden) {
    const bool exposes =
        dir.path == "/" ? resolved == "/"
                        : IsUnderOrEqual(resolved, dir.path) || IsUnderOrEqual(dir.path, resolved);
    if (exposes && dir.bindable_below && resolved.size() > dir.path.size() &&
        IsUnderOrEqual(resolved, dir.path) &&
        dir.bindable_below(resolved.substr(dir.path == "/" ? 1 : dir.path.size() + 1))) {
      continue;
    }
    if (exposes) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": '", spelled, "'", via, " would expose ", dir.what, " '", dir.path, "'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox::policy
