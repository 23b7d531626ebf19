#include "base/peer_check.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ccsandbox {

bool StatusShowsNestedPidNamespace(absl::string_view status) {
  for (absl::string_view line : absl::StrSplit(status, '\n')) {
    if (!absl::ConsumePrefix(&line, "NSpid:")) continue;
    std::vector<absl::string_view> pids =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    return pids.size() != 1;
  }
  return true;
}

absl::Status CheckPeerOutsideSandboxes(const ucred& peer) {
  if (peer.pid <= 0) {
    return absl::PermissionDeniedError(
        "the calling process is not visible from here (another pid namespace): refused");
  }
  std::ifstream in(absl::StrCat("/proc/", peer.pid, "/status"));
  std::stringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty()) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot read /proc/", peer.pid, "/status of the caller: refused"));
  }
  if (StatusShowsNestedPidNamespace(text.str())) {
    return absl::PermissionDeniedError(
        "the calling process runs in a nested pid namespace (inside a sandbox): refused");
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox
