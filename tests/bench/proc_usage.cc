#include "tests/bench/proc_usage.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tests/bench/bench_process.h"

namespace ccsandbox::bench {
namespace {

// The number after "Field:" in a /proc key-value file ("VmRSS:   1234 kB" → 1234); 0 if absent.
long FieldNumber(const std::string& text, const std::string& field) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(field + ":", 0) == 0)
      return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
  }
  return 0;
}

long CountEntries(const std::string& dir) {
  long count = 0;
  std::error_code ignored;
  for (auto it = std::filesystem::directory_iterator(dir, ignored);
       it != std::filesystem::directory_iterator(); it.increment(ignored)) {
    ++count;
  }
  return count;
}

// The parent pid from /proc/PID/stat (the field after the state, after the last ')').
pid_t ParentOf(pid_t pid) {
  const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close_paren + 1));
  std::string state;
  pid_t parent = 0;
  fields >> state >> parent;
  return parent;
}

}  // namespace

ProcessUsage ReadUsage(pid_t pid) {
  const std::string status = ReadFile(absl::StrCat("/proc/", pid, "/status"));
  if (status.empty()) return {};
  ProcessUsage usage;
  usage.processes = 1;
  usage.rss_kib = FieldNumber(status, "VmRSS");
  usage.threads = FieldNumber(status, "Threads");
  const std::string rollup = ReadFile(absl::StrCat("/proc/", pid, "/smaps_rollup"));
  if (rollup.find("Pss:") != std::string::npos) {
    usage.pss_kib = FieldNumber(rollup, "Pss");
  } else {
    usage.pss_kib = usage.rss_kib;
    usage.pss_fallbacks = 1;
  }
  usage.fds = CountEntries(absl::StrCat("/proc/", pid, "/fd"));
  return usage;
}

ProcessUsage operator+(const ProcessUsage& a, const ProcessUsage& b) {
  return {a.processes + b.processes,         a.rss_kib + b.rss_kib, a.pss_kib + b.pss_kib,
          a.pss_fallbacks + b.pss_fallbacks, a.fds + b.fds,         a.threads + b.threads};
}

ProcessUsage SumUsage(const std::vector<pid_t>& pids) {
  ProcessUsage sum;
  for (pid_t pid : pids) sum = sum + ReadUsage(pid);
  return sum;
}

std::vector<pid_t> Descendants(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  std::error_code ignored;
  for (auto it = std::filesystem::directory_iterator("/proc", ignored);
       it != std::filesystem::directory_iterator(); it.increment(ignored)) {
    int pid = 0;
    if (!absl::SimpleAtoi(it->path().filename().string(), &pid)) continue;
    if (const pid_t parent = ParentOf(pid); parent > 0) children.emplace(parent, pid);
  }
  std::vector<pid_t> found;
  std::vector<pid_t> pending = {root};
  while (!pending.empty()) {
    const pid_t parent = pending.back();
    pending.pop_back();
    auto [begin, end] = children.equal_range(parent);
    for (auto it = begin; it != end; ++it) {
      found.push_back(it->second);
      pending.push_back(it->second);
    }
  }
  return found;
}

int AwaitDescendantCount(pid_t root, int count, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  int now = static_cast<int>(Descendants(root).size());
  while (now != count && Clock::now() < deadline && !g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    now = static_cast<int>(Descendants(root).size());
  }
  return now;
}

double MiB(long kib) { return static_cast<double>(kib) / 1024.0; }

}  // namespace ccsandbox::bench
