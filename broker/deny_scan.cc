#include "broker/deny_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "policy/filename_patterns.h"
#include "policy/paths.h"

namespace ccsandbox::broker {
namespace {

std::vector<std::string> ExpandGlob(const std::string& pattern) {
  if (!policy::IsGlob(pattern)) return {pattern};
  glob_t matches{};
  std::vector<std::string> out;
  if (glob(pattern.c_str(), GLOB_NOSORT, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) out.push_back(matches.gl_pathv[i]);
  }
  globfree(&matches);
  return out;
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

class Walker {
 public:
  Walker(const ScanRequest& request, policy::DenyScan& scan,
         std::optional<policy::FilenamePatterns> patterns)
      : request_(request), scan_(scan), patterns_(std::move(patterns)) {
    for (const std::string& name : policy::SecretNames()) secret_names_.insert(name);
    for (const std::string& rel : policy::MandatoryDenyWriteNames()) {
      std::vector<std::string> parts = absl::StrSplit(rel, '/');
      if (parts.size() == 1) {
        deny_write_names_.insert(rel);
      } else {
        deny_write_nested_.emplace(parts[0], rel);
      }
    }
    for (const v1::PlanMount& m : request.mounts) mount_roots_.insert(m.guest_path());
  }

  absl::Status Walk(const std::string& root, bool writable) {
    std::vector<std::string> stack = {root};
    while (!stack.empty()) {
      const std::string dir = std::move(stack.back());
      stack.pop_back();
      DIR* d = opendir(dir.c_str());
      if (d == nullptr) continue;  // unreadable to us is unreadable to the command too
      while (dirent* entry = readdir(d)) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        if (++entries_ > request_.max_entries) {
          closedir(d);
          return absl::ResourceExhaustedError(absl::StrCat(
              "bindMounts: more than ", request_.max_entries,
              " entries under the bound trees; refusing rather than scanning only part of them "
              "for secrets and deny-write paths"));
        }
        const std::string path = dir == "/" ? "/" + name : absl::StrCat(dir, "/", name);
        bool is_dir = entry->d_type == DT_DIR;
        if (entry->d_type == DT_UNKNOWN) {
          struct stat st;
          is_dir = lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
        }
        if (secret_names_.count(name) > 0) {
          scan_.secrets.push_back(path);
          continue;  // hidden whole
        }
        const bool deny_writes = writable && !InRunnerState(path);
        // An existing .env / key / certificate stays as it is: read-only, pinned.
        if (writable && patterns_.has_value() && patterns_->Match(name).has_value()) {
          scan_.deny_write.push_back(path);
          continue;
        }
        if (deny_writes && deny_write_names_.count(name) > 0) {
          scan_.deny_write.push_back(path);
          continue;  // read-only whole
        }
        if (deny_writes) {
          auto [first, last] = deny_write_nested_.equal_range(name);
          for (auto it = first; it != last; ++it) {
            const std::string nested = absl::StrCat(dir == "/" ? "" : dir, "/", it->second);
            if (Exists(nested)) scan_.deny_write.push_back(nested);
          }
        }
        // .git internals are large and only the nested names above matter; other mounts
        // are walked on their own with their own writability.
        if (is_dir && name != ".git" && mount_roots_.count(path) == 0) stack.push_back(path);
      }
      closedir(d);
    }
    return absl::OkStatus();
  }

 private:
  bool InRunnerState(const std::string& path) const {
    for (const std::string& dir : request_.runner_state_dirs) {
      if (policy::IsUnderOrEqual(path, dir)) return true;
    }
    return false;
  }

  const ScanRequest& request_;
  policy::DenyScan& scan_;
  std::set<std::string> secret_names_;
  std::set<std::string> deny_write_names_;
  std::multimap<std::string, std::string> deny_write_nested_;
  std::set<std::string> mount_roots_;
  std::optional<policy::FilenamePatterns> patterns_;
  size_t entries_ = 0;
};

}  // namespace

absl::StatusOr<policy::DenyScan> ScanForDenyPaths(const ScanRequest& request) {
  policy::DenyScan scan;
  scan.home_dirs = request.home_dirs;
  for (const std::string& pattern : request.protected_paths) {
    for (std::string& p : ExpandGlob(pattern)) scan.protected_paths.push_back(std::move(p));
  }
  for (const std::string& pattern : policy::SystemSecretPaths()) {
    for (std::string& p : ExpandGlob(pattern)) scan.system_secrets.push_back(std::move(p));
  }
  std::optional<policy::FilenamePatterns> patterns;
  if (!request.filename_deny_patterns.empty()) {
    absl::StatusOr<policy::FilenamePatterns> created =
        policy::FilenamePatterns::Create(request.filename_deny_patterns);
    if (!created.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("writeDenyPatterns: ", created.status().message()));
    }
    patterns = *std::move(created);
  }
  Walker walker(request, scan, std::move(patterns));
  for (const v1::PlanMount& mount : request.mounts) {
    if (absl::Status s = walker.Walk(mount.guest_path(), !mount.read_only()); !s.ok()) return s;
  }
  return scan;
}

std::vector<std::string> CurrentHomeDirs() {
  std::vector<std::string> homes;
  std::vector<char> buf(16384);
  passwd pw;
  passwd* found = nullptr;
  if (getpwuid_r(getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr &&
      pw.pw_dir != nullptr && pw.pw_dir[0] == '/') {
    homes.push_back(pw.pw_dir);
  }
  const char* env = getenv("HOME");
  if (env != nullptr && policy::CheckNormalizedAbsolute("HOME", env).ok() && env != std::string("/") &&
      (homes.empty() || homes[0] != env)) {
    homes.push_back(env);
  }
  return homes;
}

}  // namespace ccsandbox::broker
