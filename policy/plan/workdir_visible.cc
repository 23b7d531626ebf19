#include "policy/plan/workdir_visible.h"

#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "policy/plan/input_limits.h"

namespace ccsandbox::policy {

absl::Status CheckWorkdirVisible(absl::string_view field, const std::string& workdir,
                                 const std::vector<v1::PlanMount>& mounts) {
  if (workdir == "/" || IsUnderOrEqual(workdir, "/tmp")) return absl::OkStatus();
  for (const v1::PlanMount& mount : mounts) {
    if (IsUnderOrEqual(workdir, mount.guest_path())) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": ", QuoteInput(workdir),
      " is outside every bind mount; the command would start in a directory the sandbox does "
      "not have (bind it, or pick a directory inside a bind, /tmp or /)"));
}

}  // namespace ccsandbox::policy
