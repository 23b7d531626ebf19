#include "policy/plan/filename_patterns.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox::policy {
namespace {

// Glob match of one component, ASCII case folded. Hand-written rather than
// fnmatch(3) so the result does not depend on the process's locale. Backtracks
// only to the last '*'.
bool GlobMatch(absl::string_view pattern, absl::string_view name);

// Matches the class starting at pattern[p] (just after '[') against c. Sets
// `end` to the index after the closing ']'. Returns nullopt when the class is
// unterminated.
std::optional<bool> MatchClass(absl::string_view pattern, size_t p, char c, size_t& end) {
  bool negate = false;
  if (p < pattern.size() && (pattern[p] == '!' || pattern[p] == '^')) {
    negate = true;
    ++p;
  }
  // Case-insensitive by construction: c matches when it, or its other ASCII case, lies in the
  // range as written (folding the range's ends instead lets "[*-a]" take 'Y' but not 'y').
  const auto u = static_cast<unsigned char>(c);
  const unsigned char spellings[] = {u, static_cast<unsigned char>(absl::ascii_tolower(u)),
                                     static_cast<unsigned char>(absl::ascii_toupper(u))};
  bool matched = false;
  bool first = true;
  while (p < pattern.size() && (first || pattern[p] != ']')) {
    first = false;
    char lo = pattern[p];
    if (lo == '\\' && p + 1 < pattern.size()) lo = pattern[++p];
    ++p;
    char hi = lo;
    if (p + 1 < pattern.size() && pattern[p] == '-' && pattern[p + 1] != ']') {
      hi = pattern[p + 1];
      if (hi == '\\' && p + 2 < pattern.size()) hi = pattern[++p + 1];
      p += 2;
    }
    for (const unsigned char x : spellings) {
      if (x >= static_cast<unsigned char>(lo) && x <= static_cast<unsigned char>(hi)) {
        matched = true;
      }
    }
  }
  if (p >= pattern.size()) return std::nullopt;
  end = p + 1;
  return matched != negate;
}

bool GlobMatch(absl::string_view pattern, absl::string_view name) {
  size_t p = 0, n = 0;
  size_t star_p = absl::string_view::npos, star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size()) {
      const char pc = pattern[p];
      if (pc == '*') {
        star_p = p++;
        star_n = n;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++n;
        continue;
      }
      if (pc == '[') {
        size_t end = 0;
        std::optional<bool> hit = MatchClass(pattern, p + 1, name[n], end);
        if (hit.has_value() && *hit) {
          p = end;
          ++n;
          continue;
        }
      } else {
        char literal = pc;
        size_t next = p + 1;
        if (pc == '\\' && p + 1 < pattern.size()) {
          literal = pattern[p + 1];
          next = p + 2;
        }
        if (absl::ascii_tolower(static_cast<unsigned char>(literal)) ==
            absl::ascii_tolower(static_cast<unsigned char>(name[n]))) {
          p = next;
          ++n;
          continue;
        }
      }
    }
    if (star_p == absl::string_view::npos) return false;
    p = star_p + 1;
    n = ++star_n;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

absl::Status CheckPattern(const std::string& pattern) {
  auto bad = [&pattern](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("writeDenyPatterns: pattern \"", pattern, "\" ", why));
  };
  if (pattern.empty()) return bad("is empty");
  if (pattern.find('/') != std::string::npos) {
    return bad(
        "contains '/': patterns match one file name (e.g. \"*.pem\"), not a "
        "path");
  }
  if (pattern.find('\0') != std::string::npos) return bad("contains a NUL byte");
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      if (i + 1 == pattern.size()) return bad("ends with a lone '\\'");
      ++i;
    } else if (pattern[i] == '[') {
      size_t end = 0;
      if (!MatchClass(pattern, i + 1, 'a', end).has_value()) return bad("has an unterminated '['");
      i = end - 1;
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool NameGlobMatches(absl::string_view pattern, absl::string_view name) {
  return GlobMatch(pattern, name);
}

absl::Status CheckNameGlob(const std::string& pattern) { return CheckPattern(pattern); }

absl::StatusOr<FilenamePatterns> FilenamePatterns::Create(
    const std::vector<std::string>& patterns) {
  for (const std::string& pattern : patterns) {
    if (absl::Status status = CheckPattern(pattern); !status.ok()) return status;
  }
  return FilenamePatterns(patterns);
}

std::optional<std::string> FilenamePatterns::Match(absl::string_view name) const {
  if (name.empty() || name == "." || name == "..") return std::nullopt;
  for (const std::string& pattern : patterns_) {
    if (GlobMatch(pattern, name)) return pattern;
  }
  return std::nullopt;
}

}  // namespace ccsandbox::policy
