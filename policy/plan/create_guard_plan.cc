#include "policy/plan/create_guard_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/paths.h"

namespace ccsandbox::policy {

std::vector<GuardMount> GuardMountsOf(const v1::LaunchPlan& plan) {
  std::vector<GuardMount> mounts;
  for (const v1::PlanMount& mount : plan.mounts()) {
    mounts.push_back(
        {mount.guest_path(), mount.host_path(), !mount.read_only(), mount.runner_state()});
  }
  return mounts;
}

std::vector<std::string> FreeCreateDirs(const std::vector<GuardMount>& mounts) {
  constexpr absl::string_view kTmp = "/tmp";
  for (const GuardMount& mount : mounts) {
    if (!mount.writable) continue;
    if (IsUnderOrEqual(mount.guest, kTmp) || IsUnderOrEqual(kTmp, mount.guest)) return {};
  }
  return {std::string(kTmp)};
}

ShimGuardDirs ShimGuardDirsOf(const std::vector<GuardMount>& mounts) {
  ShimGuardDirs dirs;
  dirs.free_create = FreeCreateDirs(mounts);
  for (const GuardMount& mount : mounts) {
    if (mount.writable) dirs.writable.push_back(mount.guest);
  }
  // The command's own Unix sockets in its private /tmp keep working even when a writable
  // bind lies beneath it (then /tmp cannot be a free dir): a socket holds no content.
  if (std::find(dirs.free_create.begin(), dirs.free_create.end(), "/tmp") ==
      dirs.free_create.end()) {
    dirs.free_sockets.push_back("/tmp");
  }
  return dirs;
}

std::string HostPathFor(absl::string_view guest_path, const std::vector<GuardMount>& mounts) {
  const GuardMount* best = nullptr;
  for (const GuardMount& mount : mounts) {
    if (!IsUnderOrEqual(guest_path, mount.guest)) continue;
    if (best == nullptr || mount.guest.size() > best->guest.size()) best = &mount;
  }
  if (best == nullptr) return std::string(guest_path);
  absl::string_view rest = guest_path.substr(best->guest.size());
  if (best->guest == "/")
    return best->host == "/" ? std::string(guest_path) : absl::StrCat(best->host, guest_path);
  return absl::StrCat(best->host, rest);
}

}  // namespace ccsandbox::policy
