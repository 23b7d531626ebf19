#include "launcher/macos/process_parent.h"

#if defined(__APPLE__)
#include <sys/sysctl.h>
#include <sys/types.h>
#else
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#endif

namespace ccsandbox::launcher::macos {

#if defined(__APPLE__)

std::optional<int64_t> ParentOf(int64_t pid) {
  if (pid <= 0) return std::nullopt;
  int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_PID, static_cast<int>(pid)};
  struct kinfo_proc info {};
  size_t size = sizeof(info);
  if (sysctl(mib, 4, &info, &size, nullptr, 0) != 0 || size == 0) return std::nullopt;
  return info.kp_eproc.e_ppid;
}

#else

std::optional<int64_t> ParentOf(int64_t pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::stringstream text;
  text << in.rdbuf();
  const std::string stat = text.str();
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses; the last ')' ends it.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 1), ' ', absl::SkipEmpty());
  int64_t ppid = 0;
  if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &ppid)) return std::nullopt;
  return ppid;
}

#endif

}  // namespace ccsandbox::launcher::macos
