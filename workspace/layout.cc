#include "workspace/layout.h"

#include <string_view>
#include <vector>

#include "absl/strings/str_split.h"

namespace ccsandbox::workspace {

bool IsBindableBelowDataDir(absl::string_view relative) {
  const std::vector<absl::string_view> parts = absl::StrSplit(relative, '/');
  for (absl::string_view part : parts) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  if (parts.size() < 5 || parts[0] != kWorkspaces || parts[2] != kConversations) return false;
  if (parts[1][0] == '.' || parts[3][0] == '.') return false;
  if (parts[4] == kRepos) return true;
  return parts.size() >= 7 && parts[4] == kAgents && parts[5][0] != '.' &&
         (parts[6] == kWork || parts[6] == kConfig);
}

}  // namespace ccsandbox::workspace
