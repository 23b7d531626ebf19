// Reading the text of one stderr line: quoted spans in the quoting styles programs use (shell,
// locale quotes, backticks), ": "-separated components outside quotes, digits, UTF-8. Pure.
#ifndef CCSANDBOX_POLICY_VIOLATIONS_LINE_TEXT_H_
#define CCSANDBOX_POLICY_VIOLATIONS_LINE_TEXT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ccsandbox::policy::violations {

bool IsDigits(absl::string_view s);

struct Quoted {
  std::string text;
  size_t end = 0;  // one past the closing quote
};

// The quoted span starting at `pos`, unescaped; shell-escape continuations ('it'\''s') join. A
// quote opens only at the start of a word, so "couldn't" has no quoted span.
std::optional<Quoted> ScanQuoted(absl::string_view s, size_t pos);

// Every quoted span of `s`, unescaped, in order.
std::vector<std::string> QuotedSpans(absl::string_view s);

// `s` without its quotes when it is exactly one quoted span.
std::string Unquote(absl::string_view s);

// Splits "a: 'b: c': d" at ": " outside quoted spans.
std::vector<absl::string_view> SplitComponents(absl::string_view s);

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8SequenceLength(absl::string_view s, size_t i);

}  // namespace ccsandbox::policy::violations

#endif  // CCSANDBOX_POLICY_VIOLATIONS_LINE_TEXT_H_
