#include "policy/command/shell_parser.h"

#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox::policy {
namespace {

constexpr size_t kUnpushed = static_cast<size_t>(-1);

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

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x110000) {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// State shared by a parser and the sub-parsers it starts for backquotes and here-documents.
struct SharedState {
  ShellScript* script = nullptr;
  const ShellParseLimits* limits = nullptr;
  size_t work = 0;
  int depth = 0;
  std::vector<size_t> serial_index;  // command serial -> index in script->commands
  absl::Status error;
};

class Parser {
 public:
  Parser(absl::string_view src, SharedState* st) : src_(src), st_(st) {}

  // The whole buffer as a command list.
  bool ParseAll() {
    if (!ParseList(/*required=*/false, "")) return false;
    SkipBlanks();
    if (!AtEnd()) return Fail(absl::StrCat("unexpected ", Describe()));
    return FinishPendingHereDocs();
  }

  // The whole buffer as the body of an unquoted here-document: only $ and ` expansions count.
  bool ScanHereDocBody() {
    ShellWord scratch;
    while (!AtEnd()) {
      if (!Tick()) return false;
      const char c = Peek();
      if (c == '\\') {
        pos_ += (pos_ + 1 < src_.size()) ? 2 : 1;
      } else if (c == '$') {
        if (!ReadDollar(&scratch, /*in_dquote=*/true)) return false;
      } else if (c == '`') {
        if (!ReadBackquote(&scratch, /*in_dquote=*/false)) return false;
      } else {
        ++pos_;
      }
    }
    return true;
  }

 private:
  struct PendingHereDoc {
    std::string delimiter;
    bool strip_tabs = false;
    bool expands = false;
    size_t serial = 0;
    size_t redirect = 0;
  };

  // RAII nesting counter; the constructor fails closed past max_nesting.
  class Nest {
   public:
    explicit Nest(Parser* p) : p_(p) { ok_ = ++p_->st_->depth <= p_->st_->limits->max_nesting; }
    ~Nest() { --p_->st_->depth; }
    bool ok() const { return ok_; }

   private:
    Parser* p_;
    bool ok_;
  };

  bool AtEnd() const { return pos_ >= src_.size(); }
  char Peek(size_t k = 0) const { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; }

  std::string Where(size_t at) const {
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

  bool Fail(absl::string_view message) { return FailAt(pos_, message); }
  bool FailAt(size_t at, absl::string_view message) {
    if (st_->error.ok()) {
      st_->error = absl::InvalidArgumentError(absl::StrCat(message, " at ", Where(at)));
    }
    return false;
  }
  bool Exhausted(absl::string_view message) {
    if (st_->error.ok()) st_->error = absl::ResourceExhaustedError(message);
    return false;
  }
  bool NestTooDeep() {
    return Exhausted(absl::StrCat("the command line nests deeper than ", st_->limits->max_nesting,
                                  " levels (subshells, substitutions, compound commands)"));
  }
  bool Tick(size_t n = 1) {
    st_->work += n;
    if (st_->work > st_->limits->max_work) {
      return Exhausted("the command line takes too much work to analyse");
    }
    return true;
  }

  // What sits at pos_, for "unexpected …" messages.
  std::string Describe() const {
    if (AtEnd()) return "end of input";
    absl::string_view op = PeekOp();
    if (op == "\n") return "newline";
    if (!op.empty()) return absl::StrCat("'", op, "'");
    size_t end = pos_;
    while (end < src_.size() && !IsMeta(src_[end]) && end - pos_ < 20) ++end;
    return absl::StrCat("'", src_.substr(pos_, std::max<size_t>(end - pos_, 1)), "'");
  }

  // Blanks, line continuations and comments; never a newline.
  void SkipBlanks() {
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

  bool SkipLinebreaks() {
    while (true) {
      SkipBlanks();
      if (Peek() != '\n' || AtEnd()) return true;
      if (!ConsumeNewline()) return false;
    }
  }

  // Control operators only; redirection operators are RedirectAhead's.
  absl::string_view PeekOp() const {
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
  absl::string_view PeekReserved() const {
    size_t end = pos_;
    while (end < src_.size() && !IsMeta(src_[end])) {
      const char c = src_[end];
      if (c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`') return "";
      ++end;
    }
    absl::string_view w = src_.substr(pos_, end - pos_);
    return IsReservedWord(w) ? w : absl::string_view();
  }

  bool AtListEnd() const {
    if (AtEnd()) return true;
    absl::string_view op = PeekOp();
    if (op == ")" || op == ";;" || op == ";&" || op == ";;&") return true;
    absl::string_view r = PeekReserved();
    return r == "then" || r == "elif" || r == "else" || r == "fi" || r == "do" || r == "done" ||
           r == "esac" || r == "}";
  }

  bool ExpectReserved(absl::string_view word, absl::string_view context) {
    if (!SkipLinebreaks()) return false;
    if (PeekReserved() != word) {
      return Fail(absl::StrCat("expected '", word, "' ", context, ", found ", Describe()));
    }
    pos_ += word.size();
    return true;
  }

  size_t NewSerial() {
    st_->serial_index.push_back(kUnpushed);
    return st_->serial_index.size() - 1;
  }

  bool Push(ShellCommand cmd, size_t serial) {
    std::vector<ShellCommand>& commands = st_->script->commands;
    if (commands.size() >= st_->limits->max_commands) {
      return Exhausted(
          absl::StrCat("the command line has more than ", st_->limits->max_commands, " commands"));
    }
    st_->serial_index[serial] = commands.size();
    commands.push_back(std::move(cmd));
    return true;
  }

  bool ConsumeNewline() {
    ++pos_;
    while (!pending_.empty()) {
      PendingHereDoc p = std::move(pending_.front());
      pending_.erase(pending_.begin());
      const size_t index = st_->serial_index[p.serial];
      if (index == kUnpushed) {
        return Fail("a here-document inside an unfinished command is not supported");
      }
      std::string body;
      while (!AtEnd()) {
        size_t eol = src_.find('\n', pos_);
        size_t line_end = eol == absl::string_view::npos ? src_.size() : eol;
        absl::string_view line = src_.substr(pos_, line_end - pos_);
        if (!Tick(line.size() + 1)) return false;
        pos_ = eol == absl::string_view::npos ? src_.size() : eol + 1;
        if (p.strip_tabs) {
          while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        }
        if (line == p.delimiter) break;
        absl::StrAppend(&body, line, "\n");
      }
      if (p.expands) {
        Nest nest(this);
        if (!nest.ok()) return NestTooDeep();
        Parser sub(body, st_);
        if (!sub.ScanHereDocBody()) return false;
      }
      st_->script->commands[index].redirects[p.redirect].heredoc_body = std::move(body);
    }
    return true;
  }

  // Here-documents still pending at the end of the input get an empty body, as in bash.
  bool FinishPendingHereDocs() {
    for (const PendingHereDoc& p : pending_) {
      if (st_->serial_index[p.serial] == kUnpushed) {
        return Fail("a here-document inside an unfinished command is not supported");
      }
    }
    pending_.clear();
    return true;
  }

  bool ParseList(bool required, absl::string_view context) {
    if (!SkipLinebreaks()) return false;
    bool any = false;
    while (!AtListEnd()) {
      const size_t first = st_->script->commands.size();
      if (!ParseAndOr()) return false;
      any = true;
      SkipBlanks();
      absl::string_view op = PeekOp();
      if (op == ";") {
        ++pos_;
      } else if (op == "&") {
        ++pos_;
        std::vector<ShellCommand>& commands = st_->script->commands;
        for (size_t i = first; i < commands.size(); ++i) commands[i].background = true;
      } else if (op == "\n") {
        if (!ConsumeNewline()) return false;
      } else {
        break;
      }
      if (!SkipLinebreaks()) return false;
    }
    if (required && !any) {
      return Fail(absl::StrCat("expected a command ", context, ", found ", Describe()));
    }
    return true;
  }

  bool ParseAndOr() {
    if (!ParsePipeline()) return false;
    while (true) {
      SkipBlanks();
      absl::string_view op = PeekOp();
      if (op != "&&" && op != "||") return true;
      const std::string op_text(op);
      pos_ += 2;
      if (!SkipLinebreaks()) return false;
      if (AtListEnd()) {
        return Fail(absl::StrCat("expected a command after '", op_text, "', found ", Describe()));
      }
      if (!ParsePipeline()) return false;
    }
  }

  bool ParsePipeline() {
    SkipBlanks();
    while (true) {
      absl::string_view r = PeekReserved();
      if (r == "!") {
        pos_ += 1;
      } else if (r == "time") {
        pos_ += 4;
        SkipBlanks();
        if (Peek() == '-' && Peek(1) == 'p' && (pos_ + 2 >= src_.size() || IsMeta(Peek(2)))) {
          pos_ += 2;
        }
      } else {
        break;
      }
      SkipBlanks();
    }
    const size_t first = st_->script->commands.size();
    int count = 0;
    while (true) {
      if (!ParseCommand()) return false;
      ++count;
      SkipBlanks();
      absl::string_view op = PeekOp();
      if (op != "|" && op != "|&") break;
      pos_ += op.size();
      if (!SkipLinebreaks()) return false;
    }
    if (count > 1) {
      std::vector<ShellCommand>& commands = st_->script->commands;
      for (size_t i = first; i < commands.size(); ++i) commands[i].in_pipeline = true;
    }
    return true;
  }

  bool ParseCommand() {
    SkipBlanks();
    if (AtEnd()) return Fail("expected a command, found end of input");
    const size_t start = pos_;
    if (Peek() == '(') {
      if (Peek(1) == '(') {
        bool arithmetic = false;
        if (!TryArithmetic(/*open_len=*/2, &arithmetic)) return false;
        if (arithmetic) {
          ShellCommand cmd;
          cmd.depth = st_->depth;
          cmd.words.push_back({"((", "((", 0});
          cmd.text = std::string(src_.substr(start, pos_ - start));
          if (!Push(std::move(cmd), NewSerial())) return false;
          return ParseTrailingRedirects(start);
        }
      }
      return ParseSubshell();
    }
    absl::string_view r = PeekReserved();
    if (r == "{") return ParseGroup();
    if (r == "if") return ParseIf();
    if (r == "while" || r == "until") return ParseWhile(r.size());
    if (r == "for" || r == "select") return ParseFor(r.size());
    if (r == "case") return ParseCase();
    if (r == "function") return ParseFunctionKeyword();
    if (r == "[[") return ParseConditional();
    if (r == "then" || r == "elif" || r == "else" || r == "fi" || r == "do" || r == "done" ||
        r == "esac" || r == "}" || r == "]]") {
      return Fail(absl::StrCat("unexpected '", r, "'"));
    }
    if (!PeekOp().empty()) return Fail(absl::StrCat("expected a command, found ", Describe()));
    return ParseSimpleCommand();
  }

  bool ParseTrailingRedirects(size_t start) {
    const size_t serial = NewSerial();
    ShellCommand cmd;
    cmd.compound = true;
    cmd.depth = st_->depth;
    while (true) {
      SkipBlanks();
      if (AtEnd() || !RedirectAhead()) break;
      ShellRedirect r;
      if (!ParseRedirect(&r, serial, cmd.redirects.size())) return false;
      cmd.redirects.push_back(std::move(r));
    }
    if (cmd.redirects.empty()) return true;
    cmd.text = std::string(Trim(src_.substr(start, pos_ - start)));
    return Push(std::move(cmd), serial);
  }

  bool ParseSubshell() {
    const size_t start = pos_;
    ++pos_;
    {
      Nest nest(this);
      if (!nest.ok()) return NestTooDeep();
      if (!ParseList(/*required=*/true, "inside '( … )'")) return false;
    }
    SkipBlanks();
    if (Peek() != ')') {
      return Fail(
          absl::StrCat("expected ')' to close the '(' at ", Where(start), ", found ", Describe()));
    }
    ++pos_;
    return ParseTrailingRedirects(start);
  }

  bool ParseGroup() {
    const size_t start = pos_;
    ++pos_;
    {
      Nest nest(this);
      if (!nest.ok()) return NestTooDeep();
      if (!ParseList(/*required=*/true, "inside '{ …; }'")) return false;
      if (!ExpectReserved("}", absl::StrCat("to close the '{' at ", Where(start)))) return false;
    }
    return ParseTrailingRedirects(start);
  }

  bool ParseIf() {
    const size_t start = pos_;
    pos_ += 2;
    {
      Nest nest(this);
      if (!nest.ok()) return NestTooDeep();
      if (!ParseList(true, "after 'if'") || !ExpectReserved("then", "after the 'if' condition") ||
          !ParseList(true, "after 'then'")) {
        return false;
      }
      while (true) {
        if (!SkipLinebreaks()) return false;
        absl::string_view r = PeekReserved();
        if (r == "elif") {
          pos_ += 4;
          if (!ParseList(true, "after 'elif'") ||
              !ExpectReserved("then", "after the 'elif' condition") ||
              !ParseList(true, "after 'then'")) {
            return false;
          }
        } else if (r == "else") {
          pos_ += 4;
          if (!ParseList(true, "after 'else'")) return false;
          break;
        } else {
          break;
        }
      }
      if (!ExpectReserved("fi", absl::StrCat("to close the 'if' at ", Where(start)))) {
        return false;
      }
    }
    return ParseTrailingRedirects(start);
  }

  bool ParseDoBody(size_t start) {
    if (!SkipLinebreaks()) return false;
    if (PeekReserved() == "{") return ParseGroup();
    if (!ExpectReserved("do", absl::StrCat("in the loop at ", Where(start))) ||
        !ParseList(true, "after 'do'") ||
        !ExpectReserved("done", absl::StrCat("to close the loop at ", Where(start)))) {
      return false;
    }
    return true;
  }

  bool ParseWhile(size_t keyword_len) {
    const size_t start = pos_;
    pos_ += keyword_len;
    {
      Nest nest(this);
      if (!nest.ok()) return NestTooDeep();
      if (!ParseList(true, "after 'while'")) return false;
      if (!ExpectReserved("do", absl::StrCat("in the loop at ", Where(start))) ||
          !ParseList(true, "after 'do'") ||
          !ExpectReserved("done", absl::StrCat("to close the loop at ", Where(start)))) {
        return false;
      }
    }
    return ParseTrailingRedirects(start);
  }

  bool ParseFor(size_t keyword_len) {
    const size_t start = pos_;
    pos_ += keyword_len;
    Nest nest(this);
    if (!nest.ok()) return NestTooDeep();
    SkipBlanks();
    if (Peek() == '(' && Peek(1) == '(') {
      bool arithmetic = false;
      if (!TryArithmetic(2, &arithmetic)) return false;
      if (!arithmetic) return Fail("expected '((' … '))' after 'for'");
      SkipBlanks();
      if (Peek() == ';') ++pos_;
    } else {
      ShellWord name;
      if (AtEnd() || IsMeta(Peek())) return Fail("expected a variable name after 'for'");
      if (!ReadWord(&name)) return false;
      if (!SkipLinebreaks()) return false;
      if (PeekReserved() == "in") {
        pos_ += 2;
        while (true) {
          SkipBlanks();
          if (AtEnd()) break;
          absl::string_view op = PeekOp();
          if (op == ";" || op == "\n") break;
          if (!op.empty() || RedirectAhead()) {
            return Fail(absl::StrCat("unexpected ", Describe(), " in the 'for' word list"));
          }
          ShellWord w;
          if (!ReadWord(&w)) return false;
        }
        if (Peek() == ';') {
          ++pos_;
        } else if (Peek() == '\n') {
          if (!ConsumeNewline()) return false;
        }
      } else if (Peek() == ';') {
        ++pos_;
      }
    }
    if (!ParseDoBody(start)) return false;
    return ParseTrailingRedirects(start);
  }

  bool ParseCase() {
    const size_t start = pos_;
    pos_ += 4;
    Nest nest(this);
    if (!nest.ok()) return NestTooDeep();
    SkipBlanks();
    ShellWord subject;
    if (AtEnd() || IsMeta(Peek())) return Fail("expected a word after 'case'");
    if (!ReadWord(&subject)) return false;
    if (!ExpectReserved("in", "after the 'case' word")) return false;
    while (true) {
      if (!SkipLinebreaks()) return false;
      if (PeekReserved() == "esac") {
        pos_ += 4;
        break;
      }
      if (AtEnd())
        return Fail(absl::StrCat("expected 'esac' to close the 'case' at ", Where(start)));
      if (Peek() == '(') ++pos_;
      while (true) {
        SkipBlanks();
        if (AtEnd() || IsMeta(Peek())) return Fail("expected a case pattern");
        ShellWord pattern;
        if (!ReadWord(&pattern)) return false;
        SkipBlanks();
        if (Peek() == '|' && Peek(1) != '|') {
          ++pos_;
          continue;
        }
        break;
      }
      if (Peek() != ')')
        return Fail(absl::StrCat("expected ')' after a case pattern, found ", Describe()));
      ++pos_;
      if (!ParseList(/*required=*/false, "")) return false;
      SkipBlanks();
      absl::string_view op = PeekOp();
      if (op == ";;" || op == ";&" || op == ";;&") {
        pos_ += op.size();
      } else if (PeekReserved() != "esac") {
        return Fail(absl::StrCat("expected ';;' or 'esac', found ", Describe()));
      }
    }
    return ParseTrailingRedirects(start);
  }

  bool ParseConditional() {
    const size_t start = pos_;
    pos_ += 2;
    Nest nest(this);
    if (!nest.ok()) return NestTooDeep();
    ShellCommand cmd;
    cmd.depth = st_->depth;
    cmd.words.push_back({"[[", "[[", 0});
    while (true) {
      if (!SkipLinebreaks()) return false;
      if (AtEnd()) return Fail(absl::StrCat("expected ']]' to close the '[[' at ", Where(start)));
      if (PeekReserved() == "]]") {
        pos_ += 2;
        break;
      }
      const char c = Peek();
      if (c == '(' || c == ')' || c == '<' || c == '>' || c == '!' || c == '|' || c == '&' ||
          c == ';') {
        if (c == ';') return Fail("unexpected ';' inside '[[ … ]]'");
        size_t len = ((c == '&' || c == '|') && Peek(1) == c) ? 2 : 1;
        std::string op(src_.substr(pos_, len));
        cmd.words.push_back({op, op, 0});
        pos_ += len;
        continue;
      }
      ShellWord w;
      if (!ReadWord(&w)) return false;
      cmd.words.push_back(std::move(w));
    }
    cmd.words.push_back({"]]", "]]", 0});
    cmd.text = std::string(src_.substr(start, pos_ - start));
    if (!Push(std::move(cmd), NewSerial())) return false;
    return ParseTrailingRedirects(start);
  }

  bool IsCompoundStart() const {
    if (Peek() == '(') return true;
    absl::string_view r = PeekReserved();
    return r == "{" || r == "if" || r == "while" || r == "until" || r == "for" || r == "select" ||
           r == "case" || r == "[[";
  }

  bool ParseFunctionBody(std::string name) {
    if (!SkipLinebreaks()) return false;
    if (!IsCompoundStart()) {
      return Fail(absl::StrCat("expected a compound command as the body of function '", name,
                               "', found ", Describe()));
    }
    Nest nest(this);
    if (!nest.ok()) return NestTooDeep();
    const size_t begin = st_->script->commands.size();
    if (!ParseCommand()) return false;
    st_->script->functions.push_back({std::move(name), begin, st_->script->commands.size()});
    return true;
  }

  bool ParseFunctionKeyword() {
    pos_ += 8;
    SkipBlanks();
    ShellWord name;
    if (AtEnd() || IsMeta(Peek())) return Fail("expected a function name after 'function'");
    if (!ReadWord(&name)) return false;
    SkipBlanks();
    if (Peek() == '(') {
      ++pos_;
      SkipBlanks();
      if (Peek() != ')') return Fail("expected ')' after 'function NAME('");
      ++pos_;
    }
    return ParseFunctionBody(std::move(name.text));
  }

  bool ParseSimpleCommand() {
    const size_t start = pos_;
    const size_t serial = NewSerial();
    ShellCommand cmd;
    cmd.depth = st_->depth;
    cmd.words.reserve(8);
    while (true) {
      SkipBlanks();
      if (AtEnd()) break;
      const char c = Peek();
      const bool process_subst = (c == '<' || c == '>') && Peek(1) == '(';
      if (!process_subst && RedirectAhead()) {
        ShellRedirect r;
        if (!ParseRedirect(&r, serial, cmd.redirects.size())) return false;
        cmd.redirects.push_back(std::move(r));
        continue;
      }
      if (!process_subst && IsMeta(c)) break;
      ShellWord w;
      if (!ReadWord(&w)) return false;
      if (cmd.words.empty()) {
        if (IsAssignmentWord(w.raw)) {
          if (w.raw.back() == '=' && Peek() == '(' && !ReadArrayValue(&w)) return false;
          cmd.assignments.push_back(std::move(w));
          continue;
        }
        if (cmd.assignments.empty() && cmd.redirects.empty()) {
          // NAME ( ) compound-command: a function definition.
          size_t p = pos_;
          while (p < src_.size() && IsBlank(src_[p])) ++p;
          if (p < src_.size() && src_[p] == '(') {
            ++p;
            while (p < src_.size() && IsBlank(src_[p])) ++p;
            if (p < src_.size() && src_[p] == ')') {
              pos_ = p + 1;
              return ParseFunctionBody(std::move(w.text));
            }
          }
        }
      }
      cmd.words.push_back(std::move(w));
    }
    if (cmd.words.empty() && cmd.assignments.empty() && cmd.redirects.empty()) {
      return Fail(absl::StrCat("expected a command, found ", Describe()));
    }
    cmd.text = std::string(Trim(src_.substr(start, pos_ - start)));
    return Push(std::move(cmd), serial);
  }

  bool ReadArrayValue(ShellWord* w) {
    const size_t open = pos_;
    ++pos_;
    while (true) {
      if (!SkipLinebreaks()) return false;
      if (AtEnd()) return FailAt(open, "unterminated array assignment '( …'");
      if (Peek() == ')') {
        ++pos_;
        break;
      }
      if (IsMeta(Peek())) return Fail(absl::StrCat("unexpected ", Describe(), " in an array"));
      ShellWord element;
      if (!ReadWord(&element)) return false;
      w->flags |= element.flags;
    }
    w->raw = std::string(src_.substr(open - w->raw.size(), pos_ - open + w->raw.size()));
    w->text = w->raw;
    return true;
  }

  // N>, N<, {name}>, &>, < and > (not process substitution: the caller checks).
  bool RedirectAhead() const {
    size_t p = pos_;
    if (p < src_.size() && absl::ascii_isdigit(src_[p])) {
      while (p < src_.size() && absl::ascii_isdigit(src_[p])) ++p;
      return p < src_.size() && (src_[p] == '<' || src_[p] == '>');
    }
    if (p < src_.size() && src_[p] == '{') {
      ++p;
      if (p >= src_.size() || !IsNameStart(src_[p])) return false;
      while (p < src_.size() && IsNameChar(src_[p])) ++p;
      return p + 1 < src_.size() && src_[p] == '}' && (src_[p + 1] == '<' || src_[p + 1] == '>');
    }
    if (p < src_.size() && src_[p] == '&') return p + 1 < src_.size() && src_[p + 1] == '>';
    return p < src_.size() && (src_[p] == '<' || src_[p] == '>');
  }

  bool ParseRedirect(ShellRedirect* r, size_t serial, size_t index) {
    const size_t start = pos_;
    if (absl::ascii_isdigit(Peek())) {
      int fd = 0;
      while (absl::ascii_isdigit(Peek())) {
        fd = fd > 100000 ? fd : fd * 10 + (Peek() - '0');
        ++pos_;
      }
      r->fd = fd;
    } else if (Peek() == '{') {
      while (Peek() != '}') ++pos_;
      ++pos_;
      r->fd = -2;
    }
    absl::string_view rest = src_.substr(pos_);
    struct OpSpelling {
      absl::string_view text;
      RedirectOp op;
    };
    static constexpr OpSpelling kOps[] = {
        {"&>>", RedirectOp::kAppendBoth}, {"&>", RedirectOp::kWriteBoth},
        {"<<<", RedirectOp::kHereString}, {"<<-", RedirectOp::kHereDoc},
        {"<<", RedirectOp::kHereDoc},     {"<>", RedirectOp::kReadWrite},
        {"<&", RedirectOp::kDupRead},     {">>", RedirectOp::kAppend},
        {">|", RedirectOp::kWrite},       {">&", RedirectOp::kDupWrite},
        {"<", RedirectOp::kRead},         {">", RedirectOp::kWrite},
    };
    absl::string_view spelled;
    for (const OpSpelling& o : kOps) {
      if (rest.substr(0, o.text.size()) == o.text) {
        spelled = o.text;
        r->op = o.op;
        break;
      }
    }
    if (spelled.empty()) return Fail("expected a redirection operator");
    if (r->fd != -1 && (r->op == RedirectOp::kWriteBoth || r->op == RedirectOp::kAppendBoth)) {
      return FailAt(start, "a file descriptor cannot precede '&>'");
    }
    pos_ += spelled.size();
    SkipBlanks();
    if (AtEnd() || (IsMeta(Peek()) && !((Peek() == '<' || Peek() == '>') && Peek(1) == '('))) {
      return FailAt(start, absl::StrCat("the redirection '", spelled, "' has no target"));
    }
    if (!ReadWord(&r->target)) return false;
    if (r->op == RedirectOp::kDupWrite) {
      const std::string& t = r->target.text;
      bool numeric = !t.empty();
      for (size_t i = 0; i < t.size(); ++i) {
        if (!absl::ascii_isdigit(t[i]) && !(t[i] == '-' && i == t.size() - 1)) numeric = false;
      }
      // `>&file` (no fd before it) writes stdout and stderr to the file, like `&>`.
      if (!numeric && r->fd == -1 && r->target.literal()) r->op = RedirectOp::kWriteBoth;
    }
    if (r->op == RedirectOp::kHereDoc) {
      PendingHereDoc p;
      p.delimiter = r->target.text;
      p.strip_tabs = spelled == "<<-";
      p.expands = (r->target.flags & kWordQuoted) == 0;
      r->heredoc_expands = p.expands;
      p.serial = serial;
      p.redirect = index;
      pending_.push_back(std::move(p));
    }
    return true;
  }

  bool ReadWord(ShellWord* w) {
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

  bool ClosingBracketAhead() const {
    for (size_t p = pos_ + 1; p < src_.size() && !IsMeta(src_[p]); ++p) {
      if (src_[p] == ']') return true;
    }
    return false;
  }

  // {a,b} or {1..3}, unquoted, inside this word.
  bool BraceExpansionAhead() const {
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

  bool ReadSingleQuoted(ShellWord* w) {
    const size_t open = pos_;
    size_t close = src_.find('\'', pos_ + 1);
    if (close == absl::string_view::npos) return FailAt(open, "unterminated single quote");
    if (!Tick(close - pos_)) return false;
    absl::StrAppend(&w->text, src_.substr(pos_ + 1, close - pos_ - 1));
    w->flags |= kWordQuoted;
    pos_ = close + 1;
    return true;
  }

  bool ReadDoubleQuoted(ShellWord* w) {
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

  bool ReadDollar(ShellWord* w, bool in_dquote) {
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

  bool ReadAnsiC(ShellWord* w) {
    const size_t open = pos_;
    pos_ += 2;
    w->flags |= kWordQuoted;
    bool truncated = false;  // bash ends the string at a decoded NUL
    auto emit = [&](uint32_t cp) {
      if (cp == 0) truncated = true;
      if (!truncated) AppendUtf8(cp, &w->text);
    };
    while (true) {
      if (AtEnd()) return FailAt(open, "unterminated $'…' string");
      if (!Tick()) return false;
      const char c = Peek();
      if (c == '\'') {
        ++pos_;
        return true;
      }
      if (c != '\\') {
        if (!truncated) w->text += c;
        ++pos_;
        continue;
      }
      const char e = Peek(1);
      pos_ += 2;
      switch (e) {
        case 'a':
          emit(7);
          break;
        case 'b':
          emit(8);
          break;
        case 'e':
        case 'E':
          emit(27);
          break;
        case 'f':
          emit(12);
          break;
        case 'n':
          emit(10);
          break;
        case 'r':
          emit(13);
          break;
        case 't':
          emit(9);
          break;
        case 'v':
          emit(11);
          break;
        case '\\':
        case '\'':
        case '"':
        case '?':
          emit(static_cast<unsigned char>(e));
          break;
        case 'c': {
          const char x = Peek();
          if (x == '\0') return Fail("unterminated $'…' string");
          ++pos_;
          emit(static_cast<unsigned char>(x) & 0x1F);
          break;
        }
        case 'x':
        case 'u':
        case 'U': {
          const int max_digits = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
          uint32_t value = 0;
          int digits = 0;
          while (digits < max_digits && HexValue(Peek()) >= 0) {
            value = value * 16 + HexValue(Peek());
            ++pos_;
            ++digits;
          }
          if (digits == 0) {
            if (!truncated) absl::StrAppend(&w->text, "\\", std::string(1, e));
          } else if (e == 'x') {
            if (value == 0) truncated = true;
            if (!truncated) w->text += static_cast<char>(value);
          } else {
            emit(value);
          }
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t value = e - '0';
            for (int i = 0; i < 2 && Peek() >= '0' && Peek() <= '7'; ++i) {
              value = value * 8 + (Peek() - '0');
              ++pos_;
            }
            if ((value & 0xFF) == 0) truncated = true;
            if (!truncated) w->text += static_cast<char>(value & 0xFF);
          } else if (e == '\0') {
            return FailAt(open, "unterminated $'…' string");
          } else if (!truncated) {
            w->text += '\\';
            w->text += e;
          }
      }
    }
  }

  bool ReadCommandSubst(ShellWord* w) {
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

  bool ReadProcessSubst(ShellWord* w) {
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
  bool TryArithmetic(size_t open_len, bool* arithmetic) {
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

  bool ReadBraceParameter(ShellWord* w, bool in_dquote) {
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

  bool ReadBackquote(ShellWord* w, bool in_dquote) {
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

  absl::string_view src_;
  SharedState* st_;
  size_t pos_ = 0;
  std::vector<PendingHereDoc> pending_;
};

}  // namespace

absl::StatusOr<ShellScript> ParseShell(absl::string_view input, const ShellParseLimits& limits) {
  if (input.size() > limits.max_input_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("the command line is ", input.size(),
                                                     " bytes; the policy analyses at most ",
                                                     limits.max_input_bytes));
  }
  if (input.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("the command line contains a NUL byte");
  }
  ShellScript script;
  SharedState st;
  st.script = &script;
  st.limits = &limits;
  Parser parser(input, &st);
  if (!parser.ParseAll()) {
    if (st.error.ok()) st.error = absl::InternalError("shell parser failed without a reason");
    return st.error;
  }
  return script;
}

}  // namespace ccsandbox::policy
