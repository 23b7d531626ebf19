#include "policy/plan/path_spellings.h"

#include <set>

#include "base/paths.h"

namespace ccsandbox::policy {

std::vector<std::string> Spellings(const std::string& path, const PathResolver& resolver) {
  if (IsGlob(path)) return {path};
  std::optional<std::string> resolved = resolver.Resolve(path);
  if (!resolved.has_value() || *resolved == path) return {path};
  return {path, *resolved};
}

std::vector<std::string> AllSpellings(const std::vector<std::string>& paths,
                                      const PathResolver& resolver) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& path : paths) {
    for (std::string& spelling : Spellings(path, resolver)) {
      if (seen.insert(spelling).second) out.push_back(std::move(spelling));
    }
  }
  return out;
}

}  // namespace ccsandbox::policy
