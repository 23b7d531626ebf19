#include "tests/bench/proc_cpu.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tests/bench/bench_process.h"

namespace ccsandbox::bench {

double CpuSeconds(const std::string& stat_path) {
  if (stat_path.empty()) return 0;
  const std::string stat = ReadFile(stat_path);
  const size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close_paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

long ContextSwitches(const std::string& status_path) {
  if (status_path.empty()) return 0;
  std::istringstream lines(ReadFile(status_path));
  std::string line;
  long total = 0;
  while (std::getline(lines, line)) {
    if (line.find("ctxt_switches:") != std::string::npos) {
      total += std::stol(line.substr(line.find(':') + 1));
    }
  }
  return total;
}

std::string StatusOf(const std::string& stat_path) {
  return stat_path.empty() ? "" : stat_path.substr(0, stat_path.size() - 4) + "status";
}

std::string LoopThreadStat(pid_t pid) {
  std::error_code ignored;
  for (const auto& entry :
       std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/task"), ignored)) {
    if (ReadFile((entry.path() / "comm").string()) == "egress-loop\n") {
      return (entry.path() / "stat").string();
    }
  }
  return "";
}

}  // namespace ccsandbox::bench
