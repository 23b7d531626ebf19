#include "tests/leak_census.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/poll_until.h"

namespace ccsandbox::testing {
namespace {

struct ProcStat {
  pid_t ppid = 0;
  char state = '?';
  unsigned long long start_ticks = 0;
  std::string comm;
};

// /proc/PID/stat: "pid (comm) state ppid ... starttime(22nd field) ..."; comm may hold spaces.
bool ReadStat(pid_t pid, ProcStat* out) {
  const std::string line = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= line.size()) {
    return false;
  }
  out->comm = line.substr(open + 1, close - open - 1);
  std::vector<std::string> f = absl::StrSplit(line.substr(close + 2), ' ');
  if (f.size() < 20) return false;
  out->state = f[0].empty() ? '?' : f[0][0];
  return absl::SimpleAtoi(f[1], &out->ppid) && absl::SimpleAtoi(f[19], &out->start_ticks);
}

std::vector<pid_t> AllPids() {
  std::vector<pid_t> pids;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* entry = readdir(proc)) {
    pid_t pid;
    if (absl::SimpleAtoi(entry->d_name, &pid)) pids.push_back(pid);
  }
  closedir(proc);
  return pids;
}

// Every path below `dir` (relative, sorted); directories only when `dirs_only`.
void Walk(const std::string& dir, const std::string& prefix, bool dirs_only,
          std::vector<std::string>* out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;
    const bool is_dir = S_ISDIR(st.st_mode);
    if (is_dir || !dirs_only) out->push_back(prefix + name);
    if (is_dir) Walk(path, prefix + name + "/", dirs_only, out);
  }
  closedir(d);
}

// Mount points (field 5 of /proc/self/mountinfo) at or below one of `dirs`.
std::vector<std::string> MountsUnder(const std::vector<std::string>& dirs) {
  std::vector<std::string> mounts;
  std::istringstream info(ReadFile("/proc/self/mountinfo"));
  std::string line;
  while (std::getline(info, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.size() < 5) continue;
    for (const std::string& dir : dirs) {
      if (!dir.empty() && f[4].rfind(dir, 0) == 0) mounts.push_back(f[4]);
    }
  }
  std::sort(mounts.begin(), mounts.end());
  return mounts;
}

void DiffLists(const char* what, const std::vector<std::string>& before,
               const std::vector<std::string>& after, std::vector<std::string>* lines) {
  for (const std::string& a : after) {
    if (std::find(before.begin(), before.end(), a) == before.end()) {
      lines->push_back(absl::StrCat(what, " added: ", a));
    }
  }
  for (const std::string& b : before) {
    if (std::find(after.begin(), after.end(), b) == after.end()) {
      lines->push_back(absl::StrCat(what, " gone: ", b));
    }
  }
}

}  // namespace

std::vector<ProcessId> Descendants(pid_t root) {
  std::map<pid_t, ProcStat> stats;
  for (pid_t pid : AllPids()) {
    ProcStat s;
    if (ReadStat(pid, &s)) stats[pid] = s;
  }
  std::vector<ProcessId> found;
  std::vector<pid_t> parents = {root};
  while (!parents.empty()) {
    const pid_t parent = parents.back();
    parents.pop_back();
    for (const auto& [pid, s] : stats) {
      if (s.ppid != parent) continue;
      parents.push_back(pid);
      if (s.state != 'Z') found.push_back({pid, s.start_ticks, s.comm});
    }
  }
  return found;
}

bool StillRuns(const ProcessId& process) {
  ProcStat s;
  return ReadStat(process.pid, &s) && s.start_ticks == process.start_ticks && s.state != 'Z';
}

std::map<std::string, int> OpenFds(pid_t pid) {
  std::map<std::string, int> fds;
  const std::string dir = absl::StrCat("/proc/", pid, "/fd");
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return fds;
  while (dirent* entry = readdir(d)) {
    if (entry->d_name[0] == '.') continue;
    char target[4096];
    const ssize_t n = readlink((dir + "/" + entry->d_name).c_str(), target, sizeof(target) - 1);
    std::string what = n > 0 ? std::string(target, n) : "?";
    if (what.rfind("socket:", 0) == 0 || what.rfind("pipe:", 0) == 0) {
      what = what.substr(0, what.find(':'));
    } else if (absl::EndsWith(what, ".log")) {
      what = "a log file";  // a restarted daemon writes another
    }
    ++fds[what];
  }
  closedir(d);
  return fds;
}

int Total(const std::map<std::string, int>& counts) {
  int total = 0;
  for (const auto& [name, n] : counts) total += n;
  return total;
}

// "name: before -> after" for each count that differs.
void DiffCounts(const std::string& what, const std::map<std::string, int>& before,
                const std::map<std::string, int>& after, std::vector<std::string>* lines) {
  std::map<std::string, int> names = after;
  for (const auto& [name, n] : before) names[name] += 0;
  for (const auto& [name, unused] : names) {
    const auto was = before.find(name), is = after.find(name);
    const int then = was == before.end() ? 0 : was->second;
    const int now = is == after.end() ? 0 : is->second;
    if (then != now) lines->push_back(absl::StrCat(what, " '", name, "': ", then, " -> ", now));
  }
}

LeakCensus LeakCensus::Take(const Daemons& daemons, const std::vector<std::string>& dirs) {
  LeakCensus census;
  for (pid_t daemon : {daemons.launcher_pid(), daemons.broker_pid()}) {
    if (daemon <= 0) continue;
    for (const ProcessId& p : Descendants(daemon)) ++census.processes[p.comm];
  }
  census.launcher_fds = OpenFds(daemons.launcher_pid());
  if (daemons.broker_pid() > 0) census.broker_fds = OpenFds(daemons.broker_pid());
  std::vector<std::string> roots = {daemons.dir(), daemons.runtime_dir()};
  roots.insert(roots.end(), dirs.begin(), dirs.end());
  census.mounts = MountsUnder(roots);
  for (const std::string& cgroup :
       LauncherCgroupDirs(daemons.launcher_socket(), daemons.launcher_pid())) {
    std::vector<std::string> below;
    Walk(cgroup, cgroup + "/", /*dirs_only=*/true, &below);
    census.cgroups[cgroup] = below.size();
  }
  for (const std::string& root : roots) Walk(root, root + "/", /*dirs_only=*/false, &census.files);
  std::sort(census.files.begin(), census.files.end());
  return census;
}

std::string LeakCensus::DifferencesFrom(const LeakCensus& before) const {
  std::vector<std::string> lines;
  DiffCounts("processes", before.processes, processes, &lines);
  DiffCounts("launcher fds", before.launcher_fds, launcher_fds, &lines);
  DiffCounts("broker fds", before.broker_fds, broker_fds, &lines);
  DiffLists("mount", before.mounts, mounts, &lines);
  DiffCounts("cgroups below", before.cgroups, cgroups, &lines);
  DiffLists("file", before.files, files, &lines);
  return absl::StrJoin(lines, "\n");
}

::testing::AssertionResult LeakCensus::SettlesTo(const LeakCensus& before, const Daemons& daemons,
                                                 const std::vector<std::string>& dirs,
                                                 absl::Duration timeout) {
  std::string differences;
  ::testing::AssertionResult settled = PollUntil(
      [&] {
        differences = Take(daemons, dirs).DifferencesFrom(before);
        return differences.empty();
      },
      timeout, "the daemons to hold what they held before");
  if (!settled) return settled << ":\n" << differences;
  return settled;
}

}  // namespace ccsandbox::testing
