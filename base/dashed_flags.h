// Lets the daemons accept --allowed-uids as well as Abseil's --allowed_uids:
// rewrites '-' to '_' in each flag NAME (never in values, never after a bare "--").
#ifndef CCSANDBOX_BASE_DASHED_FLAGS_H_
#define CCSANDBOX_BASE_DASHED_FLAGS_H_

#include <algorithm>
#include <string>
#include <vector>

#include "absl/flags/parse.h"

namespace ccsandbox {

inline std::vector<std::string> UnderscoreFlagNames(int argc, char** argv) {
  std::vector<std::string> out(argv, argv + argc);
  for (size_t i = 1; i < out.size(); ++i) {
    std::string& arg = out[i];
    if (arg == "--") break;
    if (arg.size() < 3 || arg[0] != '-') continue;
    const size_t start = arg[1] == '-' ? 2 : 1;
    const size_t end = std::min(arg.find('='), arg.size());
    for (size_t j = start; j < end; ++j) {
      if (arg[j] == '-') arg[j] = '_';
    }
  }
  return out;
}

// absl::ParseCommandLine over UnderscoreFlagNames; returns the positional arguments
// (argv[0] first), copied so they outlive the parse.
inline std::vector<std::string> ParseDashedCommandLine(int argc, char** argv) {
  std::vector<std::string> args = UnderscoreFlagNames(argc, argv);
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  return std::vector<std::string>(positional.begin(), positional.end());
}

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_DASHED_FLAGS_H_
