// Character classes, the cursor, control operators, reserved words, errors and work limits.
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "policy/command/shell_parser_internal.h"

namespace ccsandbox::policy::shell_internal {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool IsMeta(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
         c == '>' || c == '(' || c == ')';
}

bool IsNameStart(char c) { return absl::ascii_isalpha(c) || c == '_'; }
bool IsNameChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

// if then elif else fi do done case esac while until for select function { } ! [[ ]] time in
bool IsReservedWord(absl::string_view w) {
  if (w.empty() || w.size() > 8) return false;
  switch (w[0]) {
    case 'i':
      return w == "if" || w == "in";
    case 't':
      return w == "then" || w == "time";
    case 'e':
      return w == "elif" || w == "else" || w == "esac";
    case 'f':
      return w == "fi" || w == "for" || w == "function";
    case 'd':
      return w == "do" || w == "done";
    case 'c':
      return w == "case";
    case 'w':
      return w == "while";
    case 'u':
      return w == "until";
    case 's':
      return w == "select";
    case '{':
    case '}':
    case '!':
      return w.size() == 1;
    case '[':
      return w == "[[";
    case ']':
      return w == "]]";
    default:
      return false;
  }
}

// Characters ReadWord treats specially; a run of anything else is copied at once.
bool IsWordSpecial(char c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case ';':
    case '&':
    case '|':
    case '<':
    case '>':
    case '(':
    case ')':
    case '\\':
    case '\'':
    case '"':
    case '$':
    case '`':
    case '*':
    case '?':
    case '[':
    case '{':
    case '~':
      return true;
    default:
      return false;
  }
}

// NAME=…, NAME+=…, NAME[…]=… (the name part unquoted).
bool IsAssignmentWord(absl::string_view raw) {
  if (raw.empty() || !IsNameStart(raw[0])) return false;
  size_t i = 1;
  while (i < raw.size() && IsNameChar(raw[i])) ++i;
  if (i < raw.size() && raw[i] == '[') {
    size_t close = raw.find(']', i);
    if (close == absl::string_view::npos) return false;
    i = close + 1;
  }
  if (i < raw.size() && raw[i] == '+') ++i;
  return i < raw.size() && raw[i] == '=';
}

absl::string_view Trim(absl::string_view s) {
  while (!s.empty() && (IsBlank(s.front()) || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (IsBlank(s.back()) || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::string Parser::Where(size_t at) const {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < at && i < src_.size(); ++i) {
    if (src_[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  if (line == 1 && src_.find('\n') == absl::string_view::npos) {
    return absl::StrCat("column ", column);
  }
  return absl::StrCat("line ", line, ", column ", column);
}

bool Parser::FailAt(size_t at, absl::string_view message) {
  if (st_->error.ok()) {
    st_->error = absl::InvalidArgumentError(absl::StrCat(message, " at ", Where(at)));
  }
  return false;
}

bool Parser::Exhausted(absl::string_view message) {
  if (st_->error.ok()) st_->error = absl::ResourceExhaustedError(message);
  return false;
}

bool Parser::NestTooDeep() {
  return Exhausted(absl::StrCat("the command line nests deeper than ", st_->limits->max_nesting,
                                " levels (subshells, substitutions, compound commands)"));
}

bool Parser::Tick(size_t n) {
  st_->work += n;
  if (st_->work > st_->limits->max_work) {
    return Exhausted("the command line takes too much work to analyse");
  }
  return true;
}

// What sits at pos_, for "unexpected …" messages.
std::string Parser::Describe() const {
  if (AtEnd()) return "end of input";
  absl::string_view op = PeekOp();
  if (op == "\n") return "newline";
  if (!op.empty()) return absl::StrCat("'", op, "'");
  size_t end = pos_;
  while (end < src_.size() && !IsMeta(src_[end]) && end - pos_ < 20) ++end;
  return absl::StrCat("'", src_.substr(pos_, std::max<size_t>(end - pos_, 1)), "'");
}

// Blanks, line continuations and comments; never a newline.
void Parser::SkipBlanks() {
  while (!AtEnd()) {
    const char c = Peek();
    if (IsBlank(c)) {
      ++pos_;
    } else if (c == '\\' && Peek(1) == '\n') {
      pos_ += 2;
    } else if (c == '#') {
      size_t eol = src_.find('\n', pos_);
      pos_ = eol == absl::string_view::npos ? src_.size() : eol;
    } else {
      break;
    }
  }
}

bool Parser::SkipLinebreaks() {
  while (true) {
    SkipBlanks();
    if (Peek() != '\n' || AtEnd()) return true;
    if (!ConsumeNewline()) return false;
  }
}

// Control operators only; redirection operators are RedirectAhead's.
absl::string_view Parser::PeekOp() const {
  if (AtEnd()) return "";
  absl::string_view rest = src_.substr(pos_);
  switch (rest[0]) {
    case '&':
      if (rest.size() > 1 && rest[1] == '&') return rest.substr(0, 2);
      if (rest.size() > 1 && rest[1] == '>') return "";
      return rest.substr(0, 1);
    case '|':
      if (rest.size() > 1 && (rest[1] == '|' || rest[1] == '&')) return rest.substr(0, 2);
      return rest.substr(0, 1);
    case ';':
      if (rest.size() > 2 && rest[1] == ';' && rest[2] == '&') return rest.substr(0, 3);
      if (rest.size() > 1 && (rest[1] == ';' || rest[1] == '&')) return rest.substr(0, 2);
      return rest.substr(0, 1);
    case '(':
    case ')':
    case '\n':
      return rest.substr(0, 1);
    default:
      return "";
  }
}

// A plain reserved word at pos_ ("" when the next word is anything else).
absl::string_view Parser::PeekReserved() const {
  size_t end = pos_;
  while (end < src_.size() && !IsMeta(src_[end])) {
    const char c = src_[end];
    if (c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`') return "";
    ++end;
  }
  absl::string_view w = src_.substr(pos_, end - pos_);
  return IsReservedWord(w) ? w : absl::string_view();
}

bool Parser::AtListEnd() const {
  if (AtEnd()) return true;
  absl::string_view op = PeekOp();
  if (op == ")" || op == ";;" || op == ";&" || op == ";;&") return true;
  absl::string_view r = PeekReserved();
  return r == "then" || r == "elif" || r == "else" || r == "fi" || r == "do" || r == "done" ||
         r == "esac" || r == "}";
}

bool Parser::ExpectReserved(absl::string_view word, absl::string_view context) {
  if (!SkipLinebreaks()) return false;
  if (PeekReserved() != word) {
    return Fail(absl::StrCat("expected '", word, "' ", context, ", found ", Describe()));
  }
  pos_ += word.size();
  return true;
}

size_t Parser::NewSerial() {
  st_->serial_index.push_back(kUnpushed);
  return st_->serial_index.size() - 1;
}

bool Parser::Push(ShellCommand cmd, size_t serial) {
  std::vector<ShellCommand>& commands = st_->script->commands;
  if (commands.size() >= st_->limits->max_commands) {
    return Exhausted(
        absl::StrCat("the command line has more than ", st_->limits->max_commands, " commands"));
  }
  st_->serial_index[serial] = commands.size();
  commands.push_back(std::move(cmd));
  return true;
}

}  // namespace ccsandbox::policy::shell_internal
