#include "broker/deny_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "policy/filename_patterns.h"
#include "policy/git_config_paths.h"
#include "policy/paths.h"
#include "policy/trusted_names.h"

namespace ccsandbox::broker {
namespace {

std::vector<std::string> ExpandGlob(const std::string& pattern) {
  if (!policy::IsGlob(pattern)) return {pattern};
  glob_t matches{};
  std::vector<std::string> out;
  // A protected "co*py" is also the directory literally named so.
  struct stat st;
  if (lstat(pattern.c_str(), &st) == 0) out.push_back(pattern);
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

// At most 1 MiB of a small text file; "" when it cannot be read.
std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::string text(1 << 20, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

class Walker {
 public:
  Walker(const ScanRequest& request, policy::DenyScan& scan,
         std::optional<policy::FilenamePatterns> patterns, policy::TrustedNameRules trusted,
         policy::TrustedNameRules home_secrets)
      : request_(request),
        scan_(scan),
        patterns_(std::move(patterns)),
        trusted_(std::move(trusted)),
        home_secrets_(std::move(home_secrets)) {
    for (const std::string& name : policy::SecretNames()) secret_names_.insert(name);
    for (const policy::TrustedName& name : policy::StandardTrustedNames()) {
      if (!name.existing) creation_only_.insert(name.rule);
      if (name.existing && !name.existing_dirs) files_only_.insert(name.rule);
    }
    for (const v1::PlanMount& m : request.mounts) mount_roots_.insert(m.guest_path());
    connectable_.insert(request.connectable_sockets.begin(), request.connectable_sockets.end());
  }

  absl::Status Walk(const std::string& root, bool writable) {
    std::vector<std::string> stack = {root};
    while (!stack.empty()) {
      const std::string dir = std::move(stack.back());
      stack.pop_back();
      DIR* d = opendir(dir.c_str());
      if (d == nullptr) continue;  // unreadable to us is unreadable to the command too
      const bool in_git = absl::StrContains(absl::StrCat(dir, "/"), "/.git/");
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
        unsigned char type = entry->d_type;
        if (type == DT_UNKNOWN) {
          struct stat st;
          type = lstat(path.c_str(), &st) != 0 ? DT_UNKNOWN
                 : S_ISDIR(st.st_mode)         ? DT_DIR
                 : S_ISSOCK(st.st_mode)        ? DT_SOCK
                                               : DT_REG;
        }
        const bool is_dir = type == DT_DIR;
        if (secret_names_.count(name) > 0 || home_secrets_.Match(path).has_value()) {
          scan_.secrets.push_back(path);
          continue;  // hidden whole
        }
        // A docker.sock, ssh-agent or D-Bus socket in a bound tree would hand the sandbox
        // whatever serves it: hidden unless the spec names it.
        if (type == DT_SOCK && connectable_.count(path) == 0) {
          scan_.secrets.push_back(path);
          continue;
        }
        const bool deny_writes = writable && !InRunnerState(path);
        // An existing .env / key / certificate stays as it is: read-only, pinned.
        if (writable && patterns_.has_value() && patterns_->Match(name).has_value()) {
          scan_.deny_write.push_back(path);
          continue;
        }
        if (deny_writes) {
          if (std::optional<std::string> rule = trusted_.Match(path);
              rule.has_value() && creation_only_.count(*rule) == 0 &&
              !(is_dir && files_only_.count(*rule) > 0)) {
            scan_.deny_write.push_back(path);
            continue;  // read-only whole
          }
        }
        // What an existing repository's config makes git run (core.hooksPath = .husky/_,
        // include.path, an fsmonitor script) is as trusted as .git/hooks.
        if (is_dir && name == ".git" && writable) {
          for (const char* file : {"/config", "/config.worktree"}) {
            for (std::string& target :
                 policy::GitConfigProgramPaths(ReadText(path + file), dir, path)) {
              if (Exists(target)) scan_.deny_write.push_back(std::move(target));
            }
          }
        }
        // Git's object store and refs are large and hold nothing the host runs; other mounts
        // are walked on their own with their own writability.
        if (in_git && (name == "objects" || name == "refs" || name == "logs" || name == "lfs")) {
          continue;
        }
        if (is_dir && mount_roots_.count(path) == 0) stack.push_back(path);
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
  std::optional<policy::FilenamePatterns> patterns_;
  policy::TrustedNameRules trusted_;
  policy::TrustedNameRules home_secrets_;
  std::set<std::string> secret_names_;
  std::set<std::string> creation_only_;
  std::set<std::string> files_only_;
  std::set<std::string> mount_roots_;
  std::set<std::string> connectable_;
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
  std::vector<std::string> rules = policy::StandardTrustedNameRules();
  rules.insert(rules.end(), request.extra_trusted_names.begin(),
               request.extra_trusted_names.end());
  absl::StatusOr<policy::TrustedNameRules> trusted = policy::TrustedNameRules::Create(rules);
  if (!trusted.ok()) return trusted.status();
  absl::StatusOr<policy::TrustedNameRules> home_secrets =
      policy::TrustedNameRules::Create(policy::HomeSecretPaths(), "homeSecretPaths");
  if (!home_secrets.ok()) return home_secrets.status();
  Walker walker(request, scan, std::move(patterns), *std::move(trusted), *std::move(home_secrets));
  for (const v1::PlanMount& mount : request.mounts) {
    struct stat st;
    if (stat(mount.host_path().c_str(), &st) == 0) {
      scan.bind_ids[mount.host_path()] = {static_cast<uint64_t>(st.st_dev),
                                          static_cast<uint64_t>(st.st_ino)};
    }
    if (absl::Status s = walker.Walk(mount.guest_path(), !mount.read_only()); !s.ok()) return s;
  }
  // What the host trusts under a home directory only (~/bin ...), where it exists.
  for (const std::string& home : request.home_dirs) {
    for (const policy::TrustedName& name : policy::HomeTrustedPaths()) {
      const std::string path = absl::StrCat(home, "/", name.rule);
      if (Exists(path)) scan.deny_write.push_back(path);
    }
  }
  // Independent of the order readdir returned entries in.
  std::sort(scan.secrets.begin(), scan.secrets.end());
  std::sort(scan.deny_write.begin(), scan.deny_write.end());
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
