// Expansions inside words: $name, ${…}, $( … ), ` … `, $(( … )) and <( … ) / >( … ).
#include <cstddef>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "policy/command/shell_parser_internal.h"

namespace ccsandbox::policy::shell_internal {

bool Parser::ReadDollar(ShellWord* w, bool in_dquote) {
  const char n = Peek(1);
  if (n == '\'' && !in_dquote) return ReadAnsiC(w);
  if (n == '"' && !in_dquote) {
    ++pos_;
    return ReadDoubleQuoted(w);
  }
  if (n == '(') {
    if (Peek(2) == '(') {
      const size_t start = pos_;
      bool arithmetic = false;
      if (!TryArithmetic(/*open_len=*/3, &arithmetic)) return false;
      if (arithmetic) {
        absl::StrAppend(&w->text, src_.substr(start, pos_ - start));
        w->flags |= kWordArithmetic;
        return true;
      }
    }
    return ReadCommandSubst(w);
  }
  if (n == '{') return ReadBraceParameter(w, in_dquote);
  if (IsNameStart(n)) {
    size_t end = pos_ + 2;
    while (end < src_.size() && IsNameChar(src_[end])) ++end;
    absl::StrAppend(&w->text, src_.substr(pos_, end - pos_));
    w->flags |= kWordParameter;
    pos_ = end;
    return true;
  }
  if (absl::ascii_isdigit(n) || (n != '\0' && std::strchr("@*#?-$!", n) != nullptr)) {
    absl::StrAppend(&w->text, src_.substr(pos_, 2));
    w->flags |= kWordParameter;
    pos_ += 2;
    return true;
  }
  w->text += '$';
  ++pos_;
  return true;
}

bool Parser::ReadCommandSubst(ShellWord* w) {
  const size_t start = pos_;
  pos_ += 2;
  {
    Nest nest(this);
    if (!nest.ok()) return NestTooDeep();
    if (!ParseList(/*required=*/false, "")) return false;
  }
  SkipBlanks();
  if (Peek() != ')') {
    return Fail(
        absl::StrCat("expected ')' to close the '$(' at ", Where(start), ", found ", Describe()));
  }
  ++pos_;
  absl::StrAppend(&w->text, src_.substr(start, pos_ - start));
  w->flags |= kWordCommandSubst;
  return true;
}

bool Parser::ReadProcessSubst(ShellWord* w) {
  const size_t start = pos_;
  pos_ += 2;
  {
    Nest nest(this);
    if (!nest.ok()) return NestTooDeep();
    if (!ParseList(/*required=*/true, "inside a process substitution")) return false;
  }
  SkipBlanks();
  if (Peek() != ')') {
    return Fail(absl::StrCat("expected ')' to close the process substitution at ", Where(start),
                             ", found ", Describe()));
  }
  ++pos_;
  absl::StrAppend(&w->text, src_.substr(start, pos_ - start));
  w->flags |= kWordProcessSubst;
  return true;
}

// `$((` / `((`: arithmetic when the parentheses close with `))`; otherwise bash reads a
// command substitution or subshell that starts with a subshell, and so do we (arithmetic
// false, everything the attempt added rolled back).
bool Parser::TryArithmetic(size_t open_len, bool* arithmetic) {
  const size_t save = pos_;
  const size_t commands = st_->script->commands.size();
  const size_t functions = st_->script->functions.size();
  const size_t pending = pending_.size();
  Nest nest(this);
  if (!nest.ok()) return NestTooDeep();
  pos_ += open_len;
  int depth = 0;
  ShellWord scratch;
  while (!AtEnd()) {
    if (!Tick()) return false;
    const char c = Peek();
    if (c == '(') {
      ++depth;
      ++pos_;
    } else if (c == ')') {
      if (depth == 0) {
        if (Peek(1) == ')') {
          pos_ += 2;
          *arithmetic = true;
          return true;
        }
        break;
      }
      --depth;
      ++pos_;
    } else if (c == '$') {
      if (!ReadDollar(&scratch, false)) return false;
    } else if (c == '`') {
      if (!ReadBackquote(&scratch, false)) return false;
    } else if (c == '\'') {
      if (!ReadSingleQuoted(&scratch)) return false;
    } else if (c == '"') {
      if (!ReadDoubleQuoted(&scratch)) return false;
    } else if (c == '\\') {
      pos_ += 2;
    } else {
      ++pos_;
    }
  }
  if (pending_.size() < pending) {
    return FailAt(save, "a here-document inside an ambiguous '((' construct is not supported");
  }
  pos_ = save;
  st_->script->commands.resize(commands);
  st_->script->functions.resize(functions);
  pending_.resize(pending);
  *arithmetic = false;
  return true;
}

bool Parser::ReadBraceParameter(ShellWord* w, bool in_dquote) {
  const size_t start = pos_;
  // "${x:-"${x:-…"}"}" recurses through here without any other nesting construct.
  Nest nest(this);
  if (!nest.ok()) return NestTooDeep();
  pos_ += 2;
  int depth = 1;
  ShellWord scratch;
  while (true) {
    if (AtEnd()) return FailAt(start, "unterminated '${'");
    if (!Tick()) return false;
    const char c = Peek();
    if (c == '}') {
      ++pos_;
      if (--depth == 0) break;
    } else if (c == '{') {
      ++depth;
      ++pos_;
    } else if (c == '\\') {
      pos_ += 2;
    } else if (c == '\'' && !in_dquote) {
      if (!ReadSingleQuoted(&scratch)) return false;
    } else if (c == '"') {
      if (!ReadDoubleQuoted(&scratch)) return false;
    } else if (c == '$') {
      if (!ReadDollar(&scratch, in_dquote)) return false;
    } else if (c == '`') {
      if (!ReadBackquote(&scratch, in_dquote)) return false;
    } else {
      ++pos_;
    }
  }
  if (pos_ > src_.size()) return FailAt(start, "unterminated '${'");
  absl::StrAppend(&w->text, src_.substr(start, pos_ - start));
  w->flags |= kWordParameter | (scratch.flags & kWordDynamicFlags);
  return true;
}

bool Parser::ReadBackquote(ShellWord* w, bool in_dquote) {
  const size_t open = pos_;
  ++pos_;
  std::string inner;
  while (true) {
    if (AtEnd()) return FailAt(open, "unterminated backquote");
    if (!Tick()) return false;
    const char c = Peek();
    if (c == '`') {
      ++pos_;
      break;
    }
    if (c == '\\' && pos_ + 1 < src_.size()) {
      const char n = src_[pos_ + 1];
      if (n == '$' || n == '`' || n == '\\' || (in_dquote && n == '"')) {
        inner += n;
      } else {
        inner += c;
        inner += n;
      }
      pos_ += 2;
      continue;
    }
    inner += c;
    ++pos_;
  }
  {
    Nest nest(this);
    if (!nest.ok()) return NestTooDeep();
    Parser sub(inner, st_);
    if (!sub.ParseAll()) {
      if (st_->error.code() == absl::StatusCode::kInvalidArgument) {
        st_->error = absl::InvalidArgumentError(
            absl::StrCat(st_->error.message(), " inside the backquotes at ", Where(open)));
      }
      return false;
    }
  }
  absl::StrAppend(&w->text, src_.substr(open, pos_ - open));
  w->flags |= kWordCommandSubst;
  return true;
}

}  // namespace ccsandbox::policy::shell_internal
