#include "base/paths.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ccsandbox {

absl::Status CheckNormalizedAbsolute(absl::string_view field, absl::string_view path) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": '", path, "' ", why));
  };
  if (path.empty()) return bad("is empty; an absolute path is required");
  if (path.find('\0') != absl::string_view::npos) return bad("contains a NUL byte");
  if (path[0] != '/') return bad("is relative; an absolute path is required");
  if (path == "/") return absl::OkStatus();
  if (path.back() == '/') return bad("has a trailing '/'; write it normalised");
  for (absl::string_view part : absl::StrSplit(path.substr(1), '/')) {
    if (part.empty()) return bad("contains '//'; write it normalised");
    if (part == "." || part == "..") return bad("contains '.' or '..'; write it normalised");
  }
  return absl::OkStatus();
}

absl::Status CheckPathComponent(absl::string_view field, absl::string_view name) {
  constexpr size_t kMaxComponent = 128;
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": '", absl::CHexEscape(name.substr(0, kMaxComponent)), "' ", why,
                     "; use 1 to ", kMaxComponent, " of A-Z a-z 0-9 . _ - not starting with '.'"));
  };
  if (name.empty()) return bad("is empty");
  if (name.size() > kMaxComponent) return bad("is too long");
  if (name[0] == '.') return bad("starts with '.'");
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return bad("is not a single safe directory name");
    }
  }
  return absl::OkStatus();
}

bool IsUnderOrEqual(absl::string_view path, absl::string_view root) {
  if (root == "/") return absl::StartsWith(path, "/");
  if (!absl::StartsWith(path, root)) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

std::string ParentPath(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == absl::string_view::npos ? "/" : std::string(path.substr(0, slash));
}

int PathDepth(absl::string_view path) {
  if (path == "/") return 0;
  return static_cast<int>(std::count(path.begin(), path.end(), '/'));
}

bool IsGlob(absl::string_view path) { return path.find_first_of("*?") != absl::string_view::npos; }

}  // namespace ccsandbox
