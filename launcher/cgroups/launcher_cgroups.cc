#include "launcher/cgroups/launcher_cgroups.h"

#include <sys/sysinfo.h>
#include <unistd.h>

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/paths.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::launcher {

absl::StatusOr<ResourceLimitsConfig> SetUpResourceLimits(const ResourceLimitsFlags& flags) {
  if (flags.mode != "auto" && flags.mode != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("--cgroups: '", flags.mode, "' is neither auto nor off"));
  }
  if (!flags.fs_root.empty()) {
    if (absl::Status valid = CheckNormalizedAbsolute("--cgroup-fs", flags.fs_root); !valid.ok()) {
      return valid;
    }
  }
  struct sysinfo info {};
  sysinfo(&info);
  ResourceLimitsConfig config;
  config.policy = MakeResourcePolicy(
      uint64_t{info.totalram} * info.mem_unit, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)),
      flags.max_pids, flags.max_memory_bytes, flags.max_cpu_millicores);
  if (flags.mode == "off") {
    config.reason = "turned off by --cgroups=off";
  } else if (geteuid() != 0) {
    config.reason = "the launcher is not root (cgroups are made by root)";
  } else {
    const std::string name = absl::StrFormat(
        "ccsandbox-%012x", std::hash<std::string>()(flags.socket_path) & 0xffffffffffffULL);
    absl::StatusOr<CgroupHierarchy> tree = CgroupHierarchy::Detect(name, flags.fs_root);
    if (tree.ok()) {
      if (const int left = tree->RemoveLeftovers(); left > 0) {
        spdlog::warn("killed and removed {} cgroup(s) a previous launcher left", left);
      }
      config.reason = tree->Describe();
      config.pool = std::make_shared<CgroupPool>(*tree, "s-");
      config.cgroups.emplace(*std::move(tree));
    } else {
      config.reason = std::string(tree.status().message());
    }
  }
  if (config.cgroups.has_value()) {
    absl::StatusOr<CgroupLimits> defaults = EffectiveLimits(nullptr, config.policy);
    spdlog::info("resource limits: enforced per session and per run with {}; defaults {}",
                 config.reason, defaults.ok() ? DescribeLimits(*defaults) : "?");
  } else {
    spdlog::warn("resource limits: NOT enforced: {}; a Launch asking for limits is refused",
                 config.reason);
  }
  return config;
}

std::string CgroupLeafFor(const std::string& prefix, const std::string& id) {
  std::string leaf = prefix;
  for (char c : id) {
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '_';
    leaf.push_back(kept ? c : '_');
    if (leaf.size() >= 200) break;
  }
  return leaf;
}

}  // namespace ccsandbox::launcher
