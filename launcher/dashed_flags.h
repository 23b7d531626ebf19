// Lets the daemons and the CLI accept --allowed-uids as well as Abseil's --allowed_uids:
// rewrites '-' to '_' in each flag NAME (never in values, never after a bare "--").
#ifndef CCSANDBOX_LAUNCHER_DASHED_FLAGS_H_
#define CCSANDBOX_LAUNCHER_DASHED_FLAGS_H_

#include <string>
#include <vector>

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

}  // namespace ccsandbox

#endif  // CCSANDBOX_LAUNCHER_DASHED_FLAGS_H_
