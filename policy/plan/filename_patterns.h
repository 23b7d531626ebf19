// The filename-pattern write denies (spec: writeDenyPatterns; the standard
// dispatch set is .env, .env.*, *.key, *.pem — see
// StandardFilenameDenyPatterns()): which NAMES no new file, directory, link,
// socket or device may take inside a writable bind. Pure.
//
//   absl::StatusOr<FilenamePatterns> patterns = FilenamePatterns::Create(list);
//   if (auto hit = patterns->Match("server.PEM")) ...  // *hit == "*.pem"
//
// A pattern is a glob over ONE path component (the final name that would be
// created, at any depth): `*` any run of characters including dots and none,
// `?` one character, `[...]` a class, `\` quotes the next character. Matching
// ignores ASCII case: "KEY.PEM" is a key all the same, and on a
// case-insensitive file system (a mounted share) it IS "key.pem". A leading dot
// needs no special match: "*.pem" matches ".pem".
#ifndef CCSANDBOX_POLICY_PLAN_FILENAME_PATTERNS_H_
#define CCSANDBOX_POLICY_PLAN_FILENAME_PATTERNS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

// One pattern against one name, with the syntax and case folding above.
bool NameGlobMatches(absl::string_view pattern, absl::string_view name);
// INVALID_ARGUMENT (prefixed "writeDenyPatterns: ") when `pattern` is not a valid one-name glob.
absl::Status CheckNameGlob(const std::string& pattern);

class FilenamePatterns {
 public:
  // INVALID_ARGUMENT naming the pattern when one is empty, contains '/' or NUL
  // (patterns match one name, not paths), or is malformed (an unterminated '['
  // or a trailing '\').
  static absl::StatusOr<FilenamePatterns> Create(const std::vector<std::string>& patterns);

  // The first pattern `name` (one path component) matches, or nullopt. "." and
  // ".." never match: they name existing directories.
  std::optional<std::string> Match(absl::string_view name) const;

  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  explicit FilenamePatterns(std::vector<std::string> patterns) : patterns_(std::move(patterns)) {}
  std::vector<std::string> patterns_;
};

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_FILENAME_PATTERNS_H_
