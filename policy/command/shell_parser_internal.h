// Internal to the shell parser (shell_parser.h): the recursive-descent parser behind ParseShell.
// One class, its members defined by idea across files:
//   shell_lexer.cc      character classes, the cursor, operators, reserved words, errors, limits
//   shell_commands.cc   lists, and-or lists, pipelines, simple commands, function definitions
//   shell_compound.cc   ( … ), { …; }, if, while/until, for/select, case, [[ … ]]
//   shell_redirects.cc  redirection operators and here-documents
//   shell_words.cc      words: quote removal, globs, brace expansion, tildes
//   shell_ansi_c.cc     $'…' strings
//   shell_expansions.cc $name, ${…}, $( … ), ` … `, $(( … )), <( … )
// Nothing outside those files and shell_parser.cc should include it.
#ifndef CCSANDBOX_POLICY_COMMAND_SHELL_PARSER_INTERNAL_H_
#define CCSANDBOX_POLICY_COMMAND_SHELL_PARSER_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "policy/command/shell_parser.h"

namespace ccsandbox::policy::shell_internal {

// Character classes and words (shell_lexer.cc).
bool IsBlank(char c);
bool IsMeta(char c);  // ends a word: blanks, newline, ; & | < > ( )
bool IsNameStart(char c);
bool IsNameChar(char c);
// if then elif else fi do done case esac while until for select function { } ! [[ ]] time in
bool IsReservedWord(absl::string_view w);
// Characters ReadWord treats specially; a run of anything else is copied at once.
bool IsWordSpecial(char c);
// NAME=…, NAME+=…, NAME[…]=… (the name part unquoted).
bool IsAssignmentWord(absl::string_view raw);
// Without leading and trailing blanks and newlines.
absl::string_view Trim(absl::string_view s);

// State shared by a parser and the sub-parsers it starts for backquotes and here-documents.
struct SharedState {
  ShellScript* script = nullptr;
  const ShellParseLimits* limits = nullptr;
  size_t work = 0;
  int depth = 0;
  std::vector<size_t> serial_index;  // command serial -> index in script->commands
  absl::Status error;
};

// A serial whose command is not in script->commands yet.
inline constexpr size_t kUnpushed = static_cast<size_t>(-1);

// Every member returns false on failure, with the reason in SharedState::error.
class Parser {
 public:
  Parser(absl::string_view src, SharedState* st) : src_(src), st_(st) {}

  // The whole buffer as a command list.
  bool ParseAll();

  // The whole buffer as the body of an unquoted here-document: only $ and ` expansions count.
  bool ScanHereDocBody();

 private:
  // A here-document whose body starts after the next newline.
  struct PendingHereDoc {
    std::string delimiter;
    bool strip_tabs = false;
    bool expands = false;
    size_t serial = 0;    // the command that holds the redirection
    size_t redirect = 0;  // its index in that command's redirects
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

  // The cursor, errors and limits (shell_lexer.cc).
  bool AtEnd() const { return pos_ >= src_.size(); }
  char Peek(size_t k = 0) const { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; }
  std::string Where(size_t at) const;  // "column 7" or "line 2, column 3"
  bool Fail(absl::string_view message) { return FailAt(pos_, message); }
  bool FailAt(size_t at, absl::string_view message);
  bool Exhausted(absl::string_view message);
  bool NestTooDeep();
  bool Tick(size_t n = 1);
  std::string Describe() const;  // what sits at pos_, for "unexpected …" messages
  void SkipBlanks();             // blanks, line continuations and comments; never a newline
  bool SkipLinebreaks();
  absl::string_view PeekOp() const;        // control operators only
  absl::string_view PeekReserved() const;  // "" when the next word is not a plain reserved word
  bool AtListEnd() const;
  bool ExpectReserved(absl::string_view word, absl::string_view context);
  size_t NewSerial();
  bool Push(ShellCommand cmd, size_t serial);

  // Lists, pipelines, simple commands, functions (shell_commands.cc).
  bool ParseList(bool required, absl::string_view context);
  bool ParseAndOr();
  bool ParsePipeline();
  bool ParseCommand();
  bool ParseTrailingRedirects(size_t start);
  bool ParseSimpleCommand();
  bool ReadArrayValue(ShellWord* w);
  size_t FunctionParensEnd() const;
  bool IsCompoundStart() const;
  bool ParseFunctionBody(std::string name);
  bool ParseFunctionKeyword();

  // Compound commands (shell_compound.cc).
  bool ParseSubshell();
  bool ParseGroup();
  bool ParseIf();
  bool ParseDoBody(size_t start);
  bool ParseWhile(size_t keyword_len);
  bool ParseFor(size_t keyword_len);
  bool ParseForWords();
  bool ParseCase();
  bool ParseCasePatterns();
  bool ParseConditional();

  // Redirections and here-documents (shell_redirects.cc).
  bool RedirectAhead() const;
  bool ParseRedirect(ShellRedirect* r, size_t serial, size_t index);
  bool ConsumeNewline();
  bool ReadHereDocBody(const PendingHereDoc& p, std::string* body);
  bool FinishPendingHereDocs();

  // Words and quoting (shell_words.cc).
  bool ReadWord(ShellWord* w);
  bool ClosingBracketAhead() const;
  bool BraceExpansionAhead() const;
  bool ReadSingleQuoted(ShellWord* w);
  bool ReadDoubleQuoted(ShellWord* w);
  bool ReadAnsiC(ShellWord* w);
  bool ReadAnsiCEscape(size_t open, ShellWord* w, bool* truncated);

  // Expansions (shell_expansions.cc).
  bool ReadDollar(ShellWord* w, bool in_dquote);
  bool ReadCommandSubst(ShellWord* w);
  bool ReadProcessSubst(ShellWord* w);
  bool TryArithmetic(size_t open_len, bool* arithmetic);
  bool ReadBraceParameter(ShellWord* w, bool in_dquote);
  bool ReadBackquote(ShellWord* w, bool in_dquote);

  absl::string_view src_;
  SharedState* st_;
  size_t pos_ = 0;
  std::vector<PendingHereDoc> pending_;
};

}  // namespace ccsandbox::policy::shell_internal

#endif  // CCSANDBOX_POLICY_COMMAND_SHELL_PARSER_INTERNAL_H_
