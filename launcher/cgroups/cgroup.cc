#include "launcher/cgroups/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/paths.h"

namespace ccsandbox::launcher {
namespace {

constexpr const char* kV1Controllers[] = {"memory", "pids", "cpu", "cpuacct", "freezer"};
constexpr const char* kV1Required[] = {"memory", "pids"};
constexpr const char* kV2Required[] = {"memory", "pids"};
// How long KillAll keeps killing before it reports failure.
constexpr absl::Duration kKillLimit = absl::Seconds(10);
constexpr absl::Duration kFreezeLimit = absl::Seconds(5);

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::Status WriteText(const std::string& path, absl::string_view value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat(path, ": ", strerror(errno)));
  const ssize_t n = write(fd, value.data(), value.size());
  const int saved = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return absl::InternalError(absl::StrCat("writing '", value, "' to ", path, ": ",
                                            n < 0 ? strerror(saved) : "short write"));
  }
  return absl::OkStatus();
}

// The value of `key` in a "key value" per line file (memory.events, pids.events, cpu.stat).
uint64_t KeyedValue(const std::string& text, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
    uint64_t value = 0;
    if (parts.size() == 2 && parts[0] == key && absl::SimpleAtoi(parts[1], &value)) return value;
  }
  return 0;
}

uint64_t NumberIn(const std::string& path) {
  uint64_t value = 0;
  (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadText(path)), &value);
  return value;
}

// Every directory at and below `dir`, deepest first.
void Subtree(const std::string& dir, std::vector<std::string>& out) {
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* entry = readdir(d)) {
      if (entry->d_type != DT_DIR || entry->d_name[0] == '.') continue;
      Subtree(absl::StrCat(dir, "/", entry->d_name), out);
    }
    closedir(d);
  }
  out.push_back(dir);
}

std::vector<pid_t> ProcsOf(const std::string& dir) {
  std::vector<pid_t> pids;
  for (absl::string_view line : absl::StrSplit(ReadText(dir + "/cgroup.procs"), '\n')) {
    pid_t pid;
    if (absl::SimpleAtoi(line, &pid) && pid > 0) pids.push_back(pid);
  }
  return pids;
}

struct Mount {
  std::string root;
  std::string point;
  std::string type;
  std::vector<std::string> options;  // super options: v1 controllers
};

std::vector<Mount> CgroupMounts(absl::string_view mountinfo) {
  std::vector<Mount> mounts;
  for (absl::string_view line : absl::StrSplit(mountinfo, '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 6 || dash + 3 >= f.size()) continue;
    if (f[dash + 1] != "cgroup" && f[dash + 1] != "cgroup2") continue;
    mounts.push_back(
        {f[3], f[4], f[dash + 1], absl::StrSplit(f[dash + 3], ',', absl::SkipEmpty())});
  }
  return mounts;
}

}  // namespace

absl::StatusOr<CgroupHierarchy> CgroupHierarchy::FromTables(
    absl::string_view mountinfo, absl::string_view self_cgroup, const std::string& name,
    const std::function<std::string(const std::string&)>& read, const std::string& fs_root) {
  // /proc/self/cgroup: "ID:controllers:path"; v2 is "0::path".
  std::vector<std::pair<std::vector<std::string>, std::string>> own;
  for (absl::string_view line : absl::StrSplit(self_cgroup, '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3) continue;
    own.push_back({absl::StrSplit(f[1], ',', absl::SkipEmpty()), f[2]});
  }
  auto own_path = [&](const std::vector<std::string>& controllers) -> std::string {
    for (const auto& [names, path] : own) {
      if (names == controllers) return path == "/" ? "" : path;
    }
    return "";
  };
  std::vector<Mount> mounts = CgroupMounts(mountinfo);
  if (!fs_root.empty()) {
    std::erase_if(mounts, [&](const Mount& m) { return !IsUnderOrEqual(m.point, fs_root); });
  }
  CgroupHierarchy tree;
  // v2 first: the unified hierarchy, when it has the controllers we need.
  for (const Mount& mount : mounts) {
    if (mount.type != "cgroup2") continue;
    const std::string base = mount.point + own_path({});
    const std::string available = read(mount.point + "/cgroup.controllers");
    std::vector<std::string> controllers =
        absl::StrSplit(available, absl::ByAnyChar(" \n"), absl::SkipEmpty());
    bool complete = true;
    for (const char* required : kV2Required) {
      if (std::find(controllers.begin(), controllers.end(), required) == controllers.end()) {
        complete = false;
      }
    }
    if (!complete) continue;
    tree.version_ = CgroupVersion::kV2;
    tree.roots_.push_back({base + "/" + name, controllers});
    return tree;
  }
  tree.version_ = CgroupVersion::kV1;
  std::set<std::string> found;
  for (const Mount& mount : mounts) {
    if (mount.type != "cgroup") continue;
    std::vector<std::string> controllers;
    for (const char* c : kV1Controllers) {
      if (std::find(mount.options.begin(), mount.options.end(), c) != mount.options.end()) {
        controllers.push_back(c);
      }
    }
    if (controllers.empty()) continue;
    std::vector<std::string> all;  // the mount's own controller list, as /proc/self/cgroup has it
    for (const std::string& option : mount.options) {
      if (option == "rw" || option == "ro" || absl::StartsWith(option, "name=") ||
          absl::StartsWith(option, "release_agent") || option == "clone_children" ||
          option == "noprefix" || option == "xattr") {
        continue;
      }
      all.push_back(option);
    }
    std::sort(all.begin(), all.end());
    std::string path;
    for (const auto& [names, p] : own) {
      std::vector<std::string> n = names;
      std::sort(n.begin(), n.end());
      if (n == all) path = p == "/" ? "" : p;
    }
    tree.roots_.push_back({mount.point + path + "/" + name, controllers});
    found.insert(controllers.begin(), controllers.end());
  }
  for (const char* required : kV1Required) {
    if (found.count(required) == 0) {
      return absl::UnavailableError(
          absl::StrCat("cgroups: no usable '", required,
                       "' controller (neither in a cgroup v2 hierarchy nor mounted as cgroup v1",
                       fs_root.empty() ? "" : absl::StrCat(" below ", fs_root), ")"));
    }
  }
  return tree;
}

absl::StatusOr<CgroupHierarchy> CgroupHierarchy::Detect(const std::string& name,
                                                        const std::string& fs_root) {
  absl::StatusOr<CgroupHierarchy> tree = FromTables(
      ReadText("/proc/self/mountinfo"), ReadText("/proc/self/cgroup"), name, ReadText, fs_root);
  if (!tree.ok()) return tree;
  for (const CgroupDir& root : tree->roots_) {
    if (mkdir(root.path.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::UnavailableError(
          absl::StrCat("cgroups: cannot make ", root.path, ": ", strerror(errno)));
    }
    if (tree->version_ == CgroupVersion::kV2) {
      // Our cgroups get the controllers: enabled in our parent (for the root) and the root.
      const std::string parent = root.path.substr(0, root.path.rfind('/'));
      std::string enable;
      for (const std::string& c : root.controllers) {
        if (c == "memory" || c == "pids" || c == "cpu") absl::StrAppend(&enable, "+", c, " ");
      }
      for (const std::string& dir : {parent, root.path}) {
        if (absl::Status s = WriteText(dir + "/cgroup.subtree_control", enable); !s.ok()) {
          return absl::UnavailableError(absl::StrCat("cgroups: ", s.message()));
        }
      }
    }
  }
  return tree;
}

std::string CgroupHierarchy::Describe() const {
  std::vector<std::string> parts;
  for (const CgroupDir& root : roots_) {
    parts.push_back(absl::StrCat(root.path, " (", absl::StrJoin(root.controllers, ","), ")"));
  }
  return absl::StrCat(version_ == CgroupVersion::kV2 ? "cgroup v2" : "cgroup v1", ": ",
                      absl::StrJoin(parts, "; "));
}

absl::StatusOr<std::unique_ptr<Cgroup>> CgroupHierarchy::Create(const std::string& leaf,
                                                                const Cgroup* parent) const {
  if (parent != nullptr) return parent->CreateChild(leaf);
  Cgroup base(version_, roots_);
  base.removed_ = true;  // the roots are not ours to remove
  return base.CreateChild(leaf);
}

absl::StatusOr<std::unique_ptr<Cgroup>> Cgroup::CreateChild(
    const std::string& leaf, const std::vector<std::string>& only) const {
  if (leaf.empty() || leaf.find('/') != std::string::npos || leaf[0] == '.') {
    return absl::InvalidArgumentError(absl::StrCat("cgroups: bad name '", leaf, "'"));
  }
  std::vector<CgroupDir> dirs;
  for (const CgroupDir& base : dirs_) {
    // v1: only the hierarchies of `only` (each directory costs milliseconds to make and
    // remove); v2 has one anyway.
    if (!only.empty() && version_ == CgroupVersion::kV1 &&
        std::none_of(only.begin(), only.end(), [&](const std::string& c) {
          return std::find(base.controllers.begin(), base.controllers.end(), c) !=
                 base.controllers.end();
        })) {
      continue;
    }
    const std::string path = base.path + "/" + leaf;
    if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(
          absl::StrCat("cgroups: cannot make ", path, ": ", strerror(errno)));
    }
    dirs.push_back({path, base.controllers});
  }
  auto cgroup = std::unique_ptr<Cgroup>(new Cgroup(version_, std::move(dirs)));
  if (version_ == CgroupVersion::kV2) {
    // Its own children (runs) get the controllers too.
    std::string enable;
    for (const std::string& c : cgroup->dirs_[0].controllers) {
      if (c == "memory" || c == "pids" || c == "cpu") absl::StrAppend(&enable, "+", c, " ");
    }
    (void)WriteText(cgroup->dirs_[0].path + "/cgroup.subtree_control", enable);
  }
  return cgroup;
}

int CgroupHierarchy::RemoveLeftovers() const {
  std::set<std::string> removed;
  for (const CgroupDir& root : roots_) {
    if (DIR* d = opendir(root.path.c_str())) {
      std::vector<std::string> leaves;
      while (dirent* entry = readdir(d)) {
        if (entry->d_type == DT_DIR && entry->d_name[0] != '.') leaves.push_back(entry->d_name);
      }
      closedir(d);
      for (const std::string& leaf : leaves) {
        Cgroup stale(version_, {{root.path + "/" + leaf, root.controllers}});
        removed.insert(leaf);  // its destructor kills what is left and removes it
      }
    }
  }
  return static_cast<int>(removed.size());
}

absl::Status CgroupHierarchy::RemoveAll() const {
  (void)RemoveLeftovers();
  for (const CgroupDir& root : roots_) {
    if (rmdir(root.path.c_str()) != 0 && errno != ENOENT) {
      return absl::FailedPreconditionError(
          absl::StrCat("cgroups: cannot remove ", root.path, ": ", strerror(errno)));
    }
  }
  return absl::OkStatus();
}

Cgroup::~Cgroup() {
  if (removed_) return;
  (void)KillAll();
  (void)Remove();
}

std::string Cgroup::DirOf(absl::string_view controller) const {
  for (const CgroupDir& dir : dirs_) {
    if (std::find(dir.controllers.begin(), dir.controllers.end(), controller) !=
        dir.controllers.end()) {
      return dir.path;
    }
  }
  return "";
}

absl::Status Cgroup::SetLimits(const CgroupLimits& limits) {
  auto set = [](const std::string& dir, const std::string& file,
                const std::string& value) -> absl::Status {
    if (dir.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cgroups: no controller for ", file, " on this host"));
    }
    return WriteText(dir + "/" + file, value);
  };
  const bool v2 = version_ == CgroupVersion::kV2;
  std::vector<absl::Status> results;
  if (limits.pids_max > 0)
    results.push_back(set(DirOf("pids"), "pids.max", absl::StrCat(limits.pids_max)));
  if (limits.memory_max_bytes > 0) {
    const std::string mem = DirOf("memory");
    if (v2) {
      results.push_back(set(mem, "memory.max", absl::StrCat(limits.memory_max_bytes)));
      results.push_back(set(mem, "memory.swap.max", absl::StrCat(limits.swap_max_bytes)));
    } else {
      results.push_back(set(mem, "memory.limit_in_bytes", absl::StrCat(limits.memory_max_bytes)));
      // memsw counts memory + swap; absent when the kernel does not account swap.
      if (!mem.empty() && access((mem + "/memory.memsw.limit_in_bytes").c_str(), F_OK) == 0) {
        results.push_back(set(mem, "memory.memsw.limit_in_bytes",
                              absl::StrCat(limits.memory_max_bytes + limits.swap_max_bytes)));
      }
      // v1 leaves socket buffers (TCP, UDP) out of the memory limit and counts them only once
      // this is set: else a sandbox's loopback sockets hold host memory no limit sees, up to
      // the host's global tcp_mem/udp_mem, and push every socket on the host into pressure.
      if (!mem.empty() && access((mem + "/memory.kmem.tcp.limit_in_bytes").c_str(), F_OK) == 0) {
        results.push_back(
            set(mem, "memory.kmem.tcp.limit_in_bytes", absl::StrCat(limits.memory_max_bytes)));
      }
    }
  }
  if (limits.cpu_weight > 0) {
    results.push_back(
        v2 ? set(DirOf("cpu"), "cpu.weight", absl::StrCat(limits.cpu_weight))
           : set(DirOf("cpu"), "cpu.shares",
                 absl::StrCat(std::max<uint64_t>(2, limits.cpu_weight * 1024 / 100))));
  }
  if (limits.cpu_millicores > 0) {
    const uint64_t period = 100000, quota = uint64_t{limits.cpu_millicores} * period / 1000;
    if (v2) {
      results.push_back(set(DirOf("cpu"), "cpu.max", absl::StrCat(quota, " ", period)));
    } else {
      results.push_back(set(DirOf("cpu"), "cpu.cfs_period_us", absl::StrCat(period)));
      results.push_back(set(DirOf("cpu"), "cpu.cfs_quota_us", absl::StrCat(quota)));
    }
  }
  for (const absl::Status& s : results) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

uint64_t Cgroup::PidsMax() const {
  const std::string dir = DirOf("pids");
  return dir.empty() ? 0 : NumberIn(dir + "/pids.max");
}

std::vector<std::string> Cgroup::ProcsFiles() const {
  std::vector<std::string> files;
  for (const CgroupDir& dir : dirs_) files.push_back(dir.path + "/cgroup.procs");
  return files;
}

absl::Status Cgroup::AddProcess(pid_t pid) {
  for (const std::string& file : ProcsFiles()) {
    if (absl::Status s = WriteText(file, absl::StrCat(pid)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool Cgroup::CanFreeze() const {
  return version_ == CgroupVersion::kV2
             ? access((dirs_[0].path + "/cgroup.freeze").c_str(), F_OK) == 0
             : !DirOf("freezer").empty();
}

absl::Status Cgroup::RequestFreeze(bool frozen) {
  if (version_ == CgroupVersion::kV2) {
    return WriteText(dirs_[0].path + "/cgroup.freeze", frozen ? "1" : "0");
  }
  const std::string dir = DirOf("freezer");
  if (dir.empty()) return absl::UnimplementedError("cgroups: no freezer controller on this host");
  return WriteText(dir + "/freezer.state", frozen ? "FROZEN" : "THAWED");
}

bool Cgroup::IsFrozen() const {
  if (version_ == CgroupVersion::kV2) {
    return KeyedValue(ReadText(dirs_[0].path + "/cgroup.events"), "frozen") == 1;
  }
  return absl::StripAsciiWhitespace(ReadText(DirOf("freezer") + "/freezer.state")) == "FROZEN";
}

absl::Status Cgroup::Freeze(bool frozen) {
  if (absl::Status requested = RequestFreeze(frozen); !requested.ok()) return requested;
  // Frozen means every task has stopped (v1 says FREEZING until then; v2 frozen 0): Suspend
  // returns only once output has really stopped.
  const absl::Time limit = absl::Now() + kFreezeLimit;
  while (IsFrozen() != frozen) {
    if (absl::Now() > limit) {
      if (frozen) (void)RequestFreeze(false);  // never left half-frozen
      return absl::DeadlineExceededError(absl::StrCat("cgroups: not ", frozen ? "frozen" : "thawed",
                                                      " within ",
                                                      absl::FormatDuration(kFreezeLimit)));
    }
    usleep(1000);
  }
  return absl::OkStatus();
}

absl::Status Cgroup::KillAll() {
  const absl::Time limit = absl::Now() + kKillLimit;
  if (version_ == CgroupVersion::kV2 && WriteText(dirs_[0].path + "/cgroup.kill", "1").ok()) {
    while (KeyedValue(ReadText(dirs_[0].path + "/cgroup.events"), "populated") != 0) {
      if (absl::Now() > limit) return absl::DeadlineExceededError("cgroups: kill did not finish");
      usleep(1000);
    }
    return absl::OkStatus();
  }
  // v1 (or a v2 kernel before cgroup.kill): frozen once, so nothing forks while the first
  // round is killed; then thawed for good (a frozen process does not die of SIGKILL, and one
  // frozen again mid-exit would hold up its PID namespace's teardown), and whatever is still
  // listed — only what was mid-fork — is killed until none is left.
  // Not waited for: whatever has stopped cannot fork, and the rest is killed in the next rounds.
  const bool froze = CanFreeze() && RequestFreeze(true).ok();
  auto kill_listed = [this] {
    bool any = false;
    for (const CgroupDir& dir : dirs_) {
      std::vector<std::string> tree;
      Subtree(dir.path, tree);
      for (const std::string& sub : tree) {
        for (pid_t pid : ProcsOf(sub)) {
          any = true;
          kill(pid, SIGKILL);
        }
      }
    }
    return any;
  };
  kill_listed();
  if (froze) (void)RequestFreeze(false);
  while (kill_listed()) {
    if (absl::Now() > limit) return absl::DeadlineExceededError("cgroups: kill did not finish");
    usleep(1000);
  }
  return absl::OkStatus();
}

absl::StatusOr<CgroupUsage> Cgroup::Usage() const {
  CgroupUsage usage;
  const std::string mem = DirOf("memory"), pids = DirOf("pids");
  if (version_ == CgroupVersion::kV2) {
    const std::string& dir = dirs_[0].path;
    usage.memory_peak_bytes = NumberIn(dir + "/memory.peak");
    usage.cpu_usage_us = KeyedValue(ReadText(dir + "/cpu.stat"), "usage_usec");
    usage.oom_kills = KeyedValue(ReadText(dir + "/memory.events"), "oom_kill");
    usage.pids_max_hits = KeyedValue(ReadText(dir + "/pids.events"), "max");
    usage.pids_current = NumberIn(dir + "/pids.current");
    usage.pids_peak = NumberIn(dir + "/pids.peak");
    return usage;
  }
  if (!mem.empty()) {
    usage.memory_peak_bytes = NumberIn(mem + "/memory.max_usage_in_bytes");
    usage.oom_kills = KeyedValue(ReadText(mem + "/memory.oom_control"), "oom_kill");
  }
  if (!pids.empty()) {
    usage.pids_max_hits = KeyedValue(ReadText(pids + "/pids.events"), "max");
    usage.pids_current = NumberIn(pids + "/pids.current");
    usage.pids_peak = NumberIn(pids + "/pids.peak");
  }
  if (const std::string acct = DirOf("cpuacct"); !acct.empty()) {
    usage.cpu_usage_us = NumberIn(acct + "/cpuacct.usage") / 1000;
  }
  return usage;
}

absl::Status Cgroup::Remove() {
  for (const CgroupDir& dir : dirs_) {
    std::vector<std::string> tree;
    Subtree(dir.path, tree);
    for (const std::string& sub : tree) {
      if (rmdir(sub.c_str()) != 0 && errno != ENOENT) {
        return absl::FailedPreconditionError(
            absl::StrCat("cgroups: cannot remove ", sub, ": ", strerror(errno)));
      }
    }
  }
  removed_ = true;
  return absl::OkStatus();
}

}  // namespace ccsandbox::launcher
