// Words: quote removal (\\, '…', "…"; $'…' is shell_ansi_c.cc), globs, brace expansion and
// tildes.
#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "policy/command/shell_parser_internal.h"

namespace ccsandbox::policy::shell_internal {

bool Parser::ReadWord(ShellWord* w) {
  const size_t start = pos_;
  while (!AtEnd()) {
    if (!Tick()) return false;
    const char c = Peek();
    if (c == '<' || c == '>') {
      if (pos_ == start && Peek(1) == '(') {
        if (!ReadProcessSubst(w)) return false;
        continue;
      }
      break;
    }
    if (IsMeta(c)) break;
    switch (c) {
      case '\\':
        if (Peek(1) == '\n') {
          pos_ += 2;
          break;
        }
        if (pos_ + 1 >= src_.size()) return Fail("a backslash at the end of the input");
        w->text += src_[pos_ + 1];
        w->flags |= kWordQuoted;
        pos_ += 2;
        break;
      case '\'':
        if (!ReadSingleQuoted(w)) return false;
        break;
      case '"':
        if (!ReadDoubleQuoted(w)) return false;
        break;
      case '$':
        if (!ReadDollar(w, /*in_dquote=*/false)) return false;
        break;
      case '`':
        if (!ReadBackquote(w, /*in_dquote=*/false)) return false;
        break;
      case '*':
      case '?':
        w->flags |= kWordGlob;
        w->text += c;
        ++pos_;
        break;
      case '[':
        if (ClosingBracketAhead()) w->flags |= kWordGlob;
        w->text += c;
        ++pos_;
        break;
      case '{':
        if (BraceExpansionAhead()) w->flags |= kWordBrace;
        w->text += c;
        ++pos_;
        break;
      case '~':
        if (pos_ == start) w->flags |= kWordTilde;
        w->text += c;
        ++pos_;
        break;
      default: {
        size_t end = pos_ + 1;
        while (end < src_.size() && !IsWordSpecial(src_[end])) ++end;
        if (!Tick(end - pos_ - 1)) return false;
        w->text.append(src_.data() + pos_, end - pos_);
        pos_ = end;
      }
    }
  }
  if (pos_ == start) return Fail(absl::StrCat("expected a word, found ", Describe()));
  w->raw = std::string(src_.substr(start, pos_ - start));
  return true;
}

bool Parser::ClosingBracketAhead() const {
  for (size_t p = pos_ + 1; p < src_.size() && !IsMeta(src_[p]); ++p) {
    if (src_[p] == ']') return true;
  }
  return false;
}

// {a,b} or {1..3}, unquoted, inside this word.
bool Parser::BraceExpansionAhead() const {
  int depth = 0;
  bool separator = false;
  for (size_t p = pos_; p < src_.size() && !IsMeta(src_[p]); ++p) {
    const char c = src_[p];
    if (c == '\'' || c == '"' || c == '$' || c == '`' || c == '\\') return false;
    if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return separator;
    } else if (depth == 1 &&
               (c == ',' || (c == '.' && p + 1 < src_.size() && src_[p + 1] == '.'))) {
      separator = true;
    }
  }
  return false;
}

bool Parser::ReadSingleQuoted(ShellWord* w) {
  const size_t open = pos_;
  size_t close = src_.find('\'', pos_ + 1);
  if (close == absl::string_view::npos) return FailAt(open, "unterminated single quote");
  if (!Tick(close - pos_)) return false;
  absl::StrAppend(&w->text, src_.substr(pos_ + 1, close - pos_ - 1));
  w->flags |= kWordQuoted;
  pos_ = close + 1;
  return true;
}

bool Parser::ReadDoubleQuoted(ShellWord* w) {
  const size_t open = pos_;
  ++pos_;
  w->flags |= kWordQuoted;
  while (true) {
    if (AtEnd()) return FailAt(open, "unterminated double quote");
    if (!Tick()) return false;
    const char c = Peek();
    if (c == '"') {
      ++pos_;
      return true;
    }
    if (c == '\\') {
      const char n = Peek(1);
      if (n == '$' || n == '`' || n == '"' || n == '\\') {
        w->text += n;
        pos_ += 2;
      } else if (n == '\n') {
        pos_ += 2;
      } else {
        w->text += c;
        ++pos_;
      }
    } else if (c == '$') {
      if (!ReadDollar(w, /*in_dquote=*/true)) return false;
    } else if (c == '`') {
      if (!ReadBackquote(w, /*in_dquote=*/true)) return false;
    } else {
      w->text += c;
      ++pos_;
    }
  }
}

}  // namespace ccsandbox::policy::shell_internal
