#include "policy/seatbelt/macos_spellings.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox::policy::seatbelt {

std::optional<std::string> MacosSpellings::Resolve(const std::string& path) const {
  if (!absl::StartsWith(path, "/")) return std::nullopt;
  for (const char* link : {"/tmp", "/var", "/etc"}) {
    if (path == link || absl::StartsWith(path, absl::StrCat(link, "/"))) {
      return absl::StrCat("/private", path);
    }
  }
  return path;
}

}  // namespace ccsandbox::policy::seatbelt
