// Lists (; & newline), and-or lists, pipelines, simple commands and function definitions.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "policy/command/shell_parser_internal.h"

namespace ccsandbox::policy::shell_internal {

// The whole buffer as a command list.
bool Parser::ParseAll() {
  if (!ParseList(/*required=*/false, "")) return false;
  SkipBlanks();
  if (!AtEnd()) return Fail(absl::StrCat("unexpected ", Describe()));
  return FinishPendingHereDocs();
}

bool Parser::ParseList(bool required, absl::string_view context) {
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

bool Parser::ParseAndOr() {
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

bool Parser::ParsePipeline() {
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

bool Parser::ParseCommand() {
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

bool Parser::ParseTrailingRedirects(size_t start) {
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

bool Parser::ParseSimpleCommand() {
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
      // NAME ( ) compound-command: a function definition.
      if (const size_t end = FunctionParensEnd();
          end != 0 && cmd.assignments.empty() && cmd.redirects.empty()) {
        pos_ = end;
        return ParseFunctionBody(std::move(w.text));
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

// `( )` after a word, blanks allowed: the position after `)`, or 0 when it is not there.
size_t Parser::FunctionParensEnd() const {
  size_t p = pos_;
  while (p < src_.size() && IsBlank(src_[p])) ++p;
  if (p >= src_.size() || src_[p] != '(') return 0;
  ++p;
  while (p < src_.size() && IsBlank(src_[p])) ++p;
  if (p >= src_.size() || src_[p] != ')') return 0;
  return p + 1;
}

// NAME=( … ): the elements after `=`, at pos_.
bool Parser::ReadArrayValue(ShellWord* w) {
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

bool Parser::IsCompoundStart() const {
  if (Peek() == '(') return true;
  absl::string_view r = PeekReserved();
  return r == "{" || r == "if" || r == "while" || r == "until" || r == "for" || r == "select" ||
         r == "case" || r == "[[";
}

bool Parser::ParseFunctionBody(std::string name) {
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

bool Parser::ParseFunctionKeyword() {
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

}  // namespace ccsandbox::policy::shell_internal
