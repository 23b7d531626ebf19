// SBPL (Seatbelt profile language) text that no path can subvert: string literals, regexes that
// match exactly what they say, and the globs of the plan rules (one-name globs, trusted-name
// rules with `**`) as anchored regexes. Pure.
//
// Threat: a bind, protected path or pattern named by a spec (a directory called `a") (allow
// file-write* (subpath "/` or `.*`) must never add a rule or widen a regex. Every string goes
// through SbplString; every literal piece of a regex through RegexLiteral first.
#ifndef CCSANDBOX_POLICY_SEATBELT_SBPL_H_
#define CCSANDBOX_POLICY_SEATBELT_SBPL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::policy::seatbelt {

// `s` as a double-quoted SBPL string: `\` and `"` escaped with a backslash. INVALID_ARGUMENT for
// NUL and other control characters, which a profile has no safe spelling for.
absl::StatusOr<std::string> SbplString(absl::string_view s);

// A POSIX extended regex matching exactly `s`: every metacharacter (. [ ( ) { * + ? ^ $ | \)
// escaped with a backslash (']' and '}' are literal as they stand in an ERE).
std::string RegexLiteral(absl::string_view s);

// One name glob (filename_patterns.h syntax, ASCII case folded) as a regex fragment matching the
// same names and never a '/'. INVALID_ARGUMENT for a malformed glob or a class this renderer
// cannot spell safely (one with characters other than letters and digits that is not a plain
// list of them).
absl::StatusOr<std::string> NameGlobRegex(absl::string_view glob);

// A trusted-name rule (trusted_names.h: components of name globs, `**` for any number of
// components) as a regex over an absolute path matching the rule at ANY depth:
// ".git/hooks/**" -> "/\.[gG][iI][tT]/[hH]...(/.*)?$". `anchor` (a regex) replaces the
// any-depth start: "^" + RegexLiteral(home) anchors a home-relative rule.
absl::StatusOr<std::string> TrustedRuleRegex(absl::string_view rule, absl::string_view anchor = "");

// The regexes of each strict ancestor of a rule ("a/b/**" -> "a", "a/b"), so that a rename of
// a directory on the way to a denied path can be refused too.
absl::StatusOr<std::vector<std::string>> TrustedRuleAncestorRegexes(absl::string_view rule,
                                                                    absl::string_view anchor = "");

// An absolute path with glob components ("/etc/ssh/ssh_host_*_key") as an anchored regex
// matching the path and everything beneath it.
absl::StatusOr<std::string> PathGlobRegex(absl::string_view path);

}  // namespace ccsandbox::policy::seatbelt

#endif  // CCSANDBOX_POLICY_SEATBELT_SBPL_H_
