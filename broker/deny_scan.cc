#include "broker/deny_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/paths.h"
#include "base/unique_fd.h"
#include "policy/plan/filename_patterns.h"
#include "policy/plan/git_config_paths.h"
#include "policy/plan/trusted_names.h"

namespace ccsandbox::broker {
namespace {

std::vector<std::string> ExpandGlob(const std::string& pattern) {
  if (!IsGlob(pattern)) return {pattern};
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
// Only regular files: a FIFO planted where a config is expected would block the scan.
std::string ReadText(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!fd.valid() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  std::string text(std::min<size_t>(static_cast<size_t>(st.st_size), 1 << 20), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(fd.get(), text.data() + got, text.size() - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return text;
}

// Deeper trees are refused: every entry's matching costs its depth, and a command can build
// a deep chain to make the next Launch spin.
constexpr int kMaxScanDepth = 256;

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
      if (PathDepth(dir) > kMaxScanDepth) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "bindMounts: a directory under the bound trees is more than ", kMaxScanDepth,
            " levels deep; refusing rather than scanning it for secrets and deny-write paths"));
      }
      DIR* d = opendir(dir.c_str());
      if (d == nullptr) {
        // Unreadable to us is unreadable to the command too (it runs as us, or as less) —
        // but a path we cannot even name, the command still reaches by relative steps.
        if (errno == ENAMETOOLONG) {
          return absl::ResourceExhaustedError(
              "bindMounts: a directory under the bound trees has a path longer than PATH_MAX; "
              "refusing rather than leaving it unscanned");
        }
        continue;
      }
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
        // A second name of a protected file would write its content all the same.
        if (writable && type == DT_REG) {
          struct stat st;
          if (lstat(path.c_str(), &st) == 0 && st.st_nlink > 1) {
            links_[{st.st_dev, st.st_ino}].push_back(path);
          }
        }
        // What a git config makes git run (hooksPath such as husky's .husky/_, includes,
        // filter and diff programs, an fsmonitor script) is as trusted as .git/hooks.
        if (writable && type == DT_REG) {
          ScanConfigEntry(dir, name, path);
          if (name == ".git") ScanGitDirPointer(dir, path);
        }
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
            // .git/hooks/pre-commit -> ../../scripts/pre-commit: the target runs too.
            if (is_dir) ProtectLinkTargets(path);
            continue;  // read-only whole
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

  // Every other name (hard link) of a protected regular file is protected too.
  void ProtectHardLinks() {
    std::vector<std::string> more;
    for (const std::string& path : scan_.deny_write) {
      struct stat st;
      if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink < 2) continue;
      auto it = links_.find({st.st_dev, st.st_ino});
      if (it == links_.end()) continue;
      for (const std::string& other : it->second) {
        if (other != path) more.push_back(other);
      }
    }
    scan_.deny_write.insert(scan_.deny_write.end(), more.begin(), more.end());
  }

  // The repository that encloses a bound directory (only a subdirectory of it is bound)
  // configures git for it too.
  void ScanEnclosingRepository(const std::string& root) {
    for (std::string dir = ParentPath(root); dir != "/"; dir = ParentPath(dir)) {
      struct stat st;
      if (lstat((dir + "/.git").c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        for (const char* file : {"/.git/config", "/.git/config.worktree"}) {
          ScanGitConfig(dir + file, dir, 0);
        }
      }
      return;
    }
  }

 private:
  std::string Home() const {
    return request_.home_dirs.empty() ? std::string() : request_.home_dirs[0];
  }

  // What `path` names is read-only where it exists and may not be created where it does not.
  void Protect(const std::string& path) {
    struct stat st;
    // Only what can hold content is bound read-only (a FIFO named as an include is not).
    if (lstat(path.c_str(), &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
      scan_.deny_write.push_back(path);
    }
    scan_.creation_denied.push_back(path);
  }

  // Symlinks directly inside a protected directory: their targets are what runs.
  void ProtectLinkTargets(const std::string& dir) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return;
    int budget = 1000;
    while (dirent* entry = readdir(d)) {
      if (--budget < 0) break;
      const std::string path = absl::StrCat(dir, "/", entry->d_name);
      struct stat st;
      if (lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) continue;
      char target[PATH_MAX];
      if (realpath(path.c_str(), target) != nullptr) Protect(target);
    }
    closedir(d);
  }

  // One git config and what it includes, recursively.
  void ScanGitConfig(const std::string& file, const std::string& worktree, int depth) {
    if (depth > 8 || !configs_seen_.insert(file).second) return;
    const std::string text = ReadText(file);
    if (text.empty()) return;
    std::string home = Home();
    const policy::GitConfigPaths found =
        policy::GitConfigProgramPaths(text, worktree, ParentPath(file), home);
    for (const std::string& program : found.programs) {
      Protect(program);
      struct stat st;
      if (stat(program.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) ProtectLinkTargets(program);
    }
    for (const std::string& include : found.includes) {
      Protect(include);
      ScanGitConfig(include, worktree, depth + 1);
    }
  }

  // A `.git` file ("gitdir: X", git init --separate-git-dir, a linked worktree): X is the
  // repository's git directory wherever it lives, and as trusted as a .git directory.
  void ScanGitDirPointer(const std::string& worktree, const std::string& file) {
    const std::string content = ReadText(file);
    absl::string_view text = absl::StripAsciiWhitespace(content);
    if (!absl::ConsumePrefix(&text, "gitdir:")) return;
    std::string gitdir(absl::StripAsciiWhitespace(text));
    if (gitdir.empty()) return;
    if (gitdir[0] != '/') gitdir = absl::StrCat(worktree, "/", gitdir);
    char resolved[PATH_MAX];
    if (realpath(gitdir.c_str(), resolved) == nullptr) return;
    const std::string dir = resolved;
    if (absl::EndsWith(dir, "/.git") || absl::StrContains(dir, "/.git/")) return;  // walked
    for (const char* name :
         {"/config", "/config.worktree", "/commondir", "/hooks", "/info/attributes"}) {
      Protect(dir + name);
    }
    ScanGitConfig(dir + "/config", worktree, 0);
    ScanGitConfig(dir + "/config.worktree", worktree, 0);
    ProtectLinkTargets(dir + "/hooks");
  }

  // `dir/name` is a regular file: a git config? Then of which worktree.
  void ScanConfigEntry(const std::string& dir, const std::string& name, const std::string& path) {
    if (name == ".gitconfig") {
      ScanGitConfig(path, "", 0);  // user-level: relative programs depend on the repository
      return;
    }
    if (name == "config" && absl::EndsWith(dir, "/.config/git")) {
      ScanGitConfig(path, "", 0);
      return;
    }
    if (name != "config" && name != "config.worktree") return;
    if (absl::EndsWith(dir, "/.git")) {
      ScanGitConfig(path, ParentPath(dir), 0);
    } else if (const size_t at = dir.find("/.git/modules/"); at != std::string::npos) {
      // .git/modules/a/modules/b is the submodule at a/b of the top-level worktree.
      std::string rel = dir.substr(at + std::string("/.git/modules/").size());
      rel = absl::StrReplaceAll(rel, {{"/modules/", "/"}});
      ScanGitConfig(path, absl::StrCat(dir.substr(0, at), "/", rel), 0);
    } else if (const size_t wt = dir.find("/.git/worktrees/"); wt != std::string::npos) {
      std::string gitdir(absl::StripAsciiWhitespace(ReadText(dir + "/gitdir")));
      if (!gitdir.empty() && gitdir[0] == '/') ScanGitConfig(path, ParentPath(gitdir), 0);
    } else if (absl::EndsWith(dir, ".git") && Exists(dir + "/HEAD")) {
      ScanGitConfig(path, dir, 0);  // a bare repository
    }
  }

  bool InRunnerState(const std::string& path) const {
    for (const std::string& dir : request_.runner_state_dirs) {
      if (IsUnderOrEqual(path, dir)) return true;
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
  std::set<std::string> configs_seen_;
  std::map<std::pair<dev_t, ino_t>, std::vector<std::string>> links_;  // files with nlink > 1
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
  rules.insert(rules.end(), request.extra_trusted_names.begin(), request.extra_trusted_names.end());
  absl::StatusOr<policy::TrustedNameRules> trusted = policy::TrustedNameRules::Create(rules);
  if (!trusted.ok()) return trusted.status();
  absl::StatusOr<policy::TrustedNameRules> home_secrets =
      policy::TrustedNameRules::Create(policy::HomeSecretPaths(), "homeSecretPaths");
  if (!home_secrets.ok()) return home_secrets.status();
  Walker walker(request, scan, std::move(patterns), *std::move(trusted), *std::move(home_secrets));
  for (const v1::PlanMount& mount : request.mounts) {
    if (!mount.read_only()) walker.ScanEnclosingRepository(mount.host_path());
  }
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
  walker.ProtectHardLinks();
  // Independent of the order readdir returned entries in.
  std::sort(scan.secrets.begin(), scan.secrets.end());
  std::sort(scan.deny_write.begin(), scan.deny_write.end());
  scan.deny_write.erase(std::unique(scan.deny_write.begin(), scan.deny_write.end()),
                        scan.deny_write.end());
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
  if (env != nullptr && CheckNormalizedAbsolute("HOME", env).ok() && env != std::string("/") &&
      (homes.empty() || homes[0] != env)) {
    homes.push_back(env);
  }
  return homes;
}

}  // namespace ccsandbox::broker
