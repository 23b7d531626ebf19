#include "broker/spec_paths.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "policy/plan/launch_plan.h"
#include "policy/plan/trusted_names.h"

namespace ccsandbox::broker {
namespace {

absl::Status CheckHostDir(const std::string& field, const std::string& path,
                          const policy::ForbiddenDirs& forbidden) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": '", path, "' does not exist on the host"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", path, "' cannot be resolved: ", strerror(errno)));
  }
  return policy::CheckResolvedBind(field, path, resolved, forbidden);
}

}  // namespace

std::string UnixSocketDir(const std::string& address) {
  if (!absl::StartsWith(address, "unix:")) return "";
  std::string path = address.substr(5);
  const size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  char resolved[PATH_MAX];
  return realpath(dir.c_str(), resolved) != nullptr ? std::string(resolved) : dir;
}

absl::Status CheckSpecPaths(const v1::SandboxSpec& spec, v1::SandboxBackend backend,
                            const policy::ForbiddenDirs& forbidden) {
  for (int i = 0; i < spec.bind_mounts_size(); ++i) {
    if (absl::Status s = CheckHostDir(absl::StrCat("bindMounts[", i, "].hostPath"),
                                      spec.bind_mounts(i).host_path(), forbidden);
        !s.ok()) {
      return s;
    }
  }
  for (int i = 0; i < spec.runner_state_dirs_size(); ++i) {
    if (absl::Status s = CheckHostDir(absl::StrCat("runnerStateDirs[", i, "]"),
                                      spec.runner_state_dirs(i), forbidden);
        !s.ok()) {
      return s;
    }
  }
  std::vector<std::string> rules(spec.deny_write_names().begin(), spec.deny_write_names().end());
  if (absl::StatusOr<policy::TrustedNameRules> valid = policy::TrustedNameRules::Create(rules);
      !valid.ok()) {
    return valid.status();
  }
  for (int i = 0; i < spec.connectable_sockets_size(); ++i) {
    const std::string field = absl::StrCat("connectableSockets[", i, "]");
    const std::string& path = spec.connectable_sockets(i);
    if (absl::Status s = CheckNormalizedAbsolute(field, path); !s.ok()) return s;
    // The daemons' own sockets (and the proxies') live in forbidden dirs: refused here.
    if (absl::Status s = CheckHostDir(field, path, forbidden); !s.ok()) return s;
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": '", path, "' is not a Unix socket"));
    }
  }
  if (backend == v1::SANDBOX_BACKEND_NATIVE && spec.has_guest_workdir()) {
    std::vector<v1::PlanMount> mounts = policy::PlanMounts(spec, policy::Mode::kChat);
    return policy::CheckWorkdirVisible("guestWorkdir", spec.guest_workdir(), mounts);
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox::broker
