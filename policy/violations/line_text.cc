#include "policy/violations/line_text.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox::policy::violations {
namespace {

struct QuotePair {
  absl::string_view open;
  absl::string_view close;
  bool escapes;  // backslash escapes (coreutils locale quoting, Python repr)
};

constexpr QuotePair kQuotes[] = {
    {"'", "'", true},
    {"\"", "\"", true},
    {"`", "`", false},                        // Rust and cargo
    {"\xE2\x80\x98", "\xE2\x80\x99", false},  // ‘…’ coreutils in UTF-8 locales
    {"\xE2\x80\x9C", "\xE2\x80\x9D", false},  // “…”
};

// A quote opens only at the start of a word, so "couldn't" has no quoted span.
bool AtWordStart(absl::string_view s, size_t pos) {
  if (pos == 0) return true;
  return absl::string_view(" ([{=,:").find(s[pos - 1]) != absl::string_view::npos;
}

}  // namespace

bool IsDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

std::optional<Quoted> ScanQuoted(absl::string_view s, size_t pos) {
  if (!AtWordStart(s, pos)) return std::nullopt;
  for (const QuotePair& q : kQuotes) {
    if (s.substr(pos, q.open.size()) != q.open) continue;
    Quoted out;
    size_t i = pos + q.open.size();
    while (true) {
      if (i >= s.size()) return std::nullopt;
      if (q.escapes && s[i] == '\\' && i + 1 < s.size()) {
        const char next = s[i + 1];
        if (next == '\'' || next == '"' || next == '\\') {
          out.text.push_back(next);
        } else {
          absl::StrAppend(&out.text, s.substr(i, 2));
        }
        i += 2;
        continue;
      }
      if (s.substr(i, q.close.size()) == q.close) {
        i += q.close.size();
        if (q.open == "'" && absl::StartsWith(s.substr(i), "\\'")) {
          out.text.push_back('\'');
          i += 2;
          if (i < s.size() && s[i] == '\'') {
            ++i;
            continue;
          }
        }
        out.end = i;
        return out;
      }
      out.text.push_back(s[i]);
      ++i;
    }
  }
  return std::nullopt;
}

std::vector<std::string> QuotedSpans(absl::string_view s) {
  std::vector<std::string> spans;
  for (size_t i = 0; i < s.size();) {
    if (std::optional<Quoted> q = ScanQuoted(s, i)) {
      spans.push_back(std::move(q->text));
      i = q->end;
    } else {
      ++i;
    }
  }
  return spans;
}

std::string Unquote(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  if (std::optional<Quoted> q = ScanQuoted(s, 0); q && q->end == s.size()) return q->text;
  return std::string(s);
}

std::vector<absl::string_view> SplitComponents(absl::string_view s) {
  std::vector<absl::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i < s.size();) {
    if (std::optional<Quoted> q = ScanQuoted(s, i)) {
      i = q->end;
    } else if (s.substr(i, 2) == ": ") {
      parts.push_back(s.substr(start, i - start));
      i += 2;
      start = i;
    } else {
      ++i;
    }
  }
  parts.push_back(s.substr(start));
  for (absl::string_view& p : parts) p = absl::StripAsciiWhitespace(p);
  return parts;
}

size_t Utf8SequenceLength(absl::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len;
  unsigned int min;
  unsigned int cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2, min = 0x80, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, min = 0x800, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace ccsandbox::policy::violations
