// Compound commands: ( … ), { …; }, if, while/until, for/select, case and [[ … ]].
#include <cstddef>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "policy/command/shell_parser_internal.h"

namespace ccsandbox::policy::shell_internal {

bool Parser::ParseSubshell() {
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

bool Parser::ParseGroup() {
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

bool Parser::ParseIf() {
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

bool Parser::ParseDoBody(size_t start) {
  if (!SkipLinebreaks()) return false;
  if (PeekReserved() == "{") return ParseGroup();
  if (!ExpectReserved("do", absl::StrCat("in the loop at ", Where(start))) ||
      !ParseList(true, "after 'do'") ||
      !ExpectReserved("done", absl::StrCat("to close the loop at ", Where(start)))) {
    return false;
  }
  return true;
}

bool Parser::ParseWhile(size_t keyword_len) {
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

bool Parser::ParseFor(size_t keyword_len) {
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
      if (!ParseForWords()) return false;
    } else if (Peek() == ';') {
      ++pos_;
    }
  }
  if (!ParseDoBody(start)) return false;
  return ParseTrailingRedirects(start);
}

// `in WORD…` and the `;` or newline that ends the list, at pos_.
bool Parser::ParseForWords() {
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
  return true;
}

bool Parser::ParseCase() {
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
    if (AtEnd()) return Fail(absl::StrCat("expected 'esac' to close the 'case' at ", Where(start)));
    if (!ParseCasePatterns()) return false;
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

// [(] PATTERN [| PATTERN]… ), at pos_.
bool Parser::ParseCasePatterns() {
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
  if (Peek() != ')') {
    return Fail(absl::StrCat("expected ')' after a case pattern, found ", Describe()));
  }
  ++pos_;
  return true;
}

bool Parser::ParseConditional() {
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

}  // namespace ccsandbox::policy::shell_internal
