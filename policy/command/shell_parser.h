// Shell syntax of the command lines agents send, parsed as bash would parse them, so the command
// policy can evaluate every simple command on its own. It owns syntax only: what a command MEANS
// (wrappers, `bash -c`, git subcommands) is the classifier's business.
//
// Every simple command is collected into one flat list, wherever it sits: pipelines, `;` `&&` `||`
// `&` lists, `( … )` subshells, `{ …; }` groups, if/while/until/for/select/case bodies, function
// bodies (whether or not the function is called), `$( … )`, backticks and `<( … )` / `>( … )` (also
// inside double quotes, `${…}` and `$(( … ))`), and the bodies of unquoted here-documents.
// Redirections on a compound command become a synthetic entry with no words.
//
//   absl::StatusOr<ShellScript> script = ParseShell("cd x && FOO=1 make >log 2>&1");
//   if (!script.ok()) { /* deny: script.status().message() says what is wrong and where */ }
//   for (const ShellCommand& c : script->commands) { /* c.words[0].text == "cd", then "make" */ }
//
// Fail closed: input the parser cannot fully understand (an unterminated quote, a dangling
// operator, a missing `fi`) is an INVALID_ARGUMENT error, never a partial result; input that is
// too big or nests too deep is RESOURCE_EXHAUSTED. Work is bounded by ShellParseLimits.
#ifndef CCSANDBOX_POLICY_COMMAND_SHELL_PARSER_H_
#define CCSANDBOX_POLICY_COMMAND_SHELL_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

struct ShellParseLimits {
  size_t max_input_bytes = 64 * 1024;
  // Subshells, groups, compound commands, substitutions and nested shell code, together.
  int max_nesting = 32;
  size_t max_commands = 4096;
  // Characters scanned, counting re-scans (backticks, `$((` that turns out to be `$( (`).
  size_t max_work = 4 * 1024 * 1024;
};

// What a word holds besides literal text. Quoting never counts: `"git"` is as literal as `git`.
enum ShellWordFlag : uint32_t {
  kWordParameter = 1u << 0,     // $x ${x…} $1 $@
  kWordCommandSubst = 1u << 1,  // $( … ) or ` … `
  kWordArithmetic = 1u << 2,    // $(( … ))
  kWordProcessSubst = 1u << 3,  // <( … ) >( … )
  kWordGlob = 1u << 4,          // unquoted * ? [ … ]
  kWordBrace = 1u << 5,         // unquoted {a,b} or {1..3}
  kWordTilde = 1u << 6,         // unquoted leading ~ (home directory)
  kWordQuoted = 1u << 7,        // some part was quoted or backslash-escaped
};

// Flags whose value is only known when the command runs.
inline constexpr uint32_t kWordDynamicFlags = kWordParameter | kWordCommandSubst | kWordArithmetic |
                                              kWordProcessSubst | kWordGlob | kWordBrace;

struct ShellWord {
  // After quote removal; `$'…'` decoded. Expansions keep their source spelling ("$HOME/x").
  std::string text;
  std::string raw;  // as written
  uint32_t flags = 0;

  // True when the word's value is known before the command runs (a tilde is allowed).
  bool literal() const { return (flags & kWordDynamicFlags) == 0; }
};

enum class RedirectOp {
  kRead,        // <
  kWrite,       // > and >|
  kAppend,      // >>
  kReadWrite,   // <>
  kDupRead,     // <&N, <&-
  kDupWrite,    // >&N, >&-
  kWriteBoth,   // &> and >&file
  kAppendBoth,  // &>>
  kHereDoc,     // << and <<-
  kHereString,  // <<<
};

struct ShellRedirect {
  int fd = -1;  // the explicit fd before the operator (2 in 2>&1); -1 when absent
  RedirectOp op = RedirectOp::kRead;
  ShellWord target;              // file, fd number, "-", here-doc delimiter or here-string
  std::string heredoc_body;      // kHereDoc only
  bool heredoc_expands = false;  // unquoted delimiter: the body undergoes $ and ` expansion
};

struct ShellCommand {
  std::vector<ShellWord> assignments;  // NAME=value before the command name
  std::vector<ShellWord> words;        // argv; empty for assignments or redirections alone
  std::vector<ShellRedirect> redirects;
  std::string text;  // source text, for decisions and messages
  int depth = 0;     // nesting level: 0 at top level
  bool in_pipeline = false;
  bool background = false;
  bool compound = false;  // synthetic: the redirections of a compound command
};

struct ShellFunction {
  std::string name;
  size_t body_begin = 0;  // the body's commands are commands[body_begin, body_end)
  size_t body_end = 0;
};

struct ShellScript {
  std::vector<ShellCommand> commands;  // inner commands precede the command that contains them
  std::vector<ShellFunction> functions;
};

// Parses `input` as a bash command line. See the file comment for errors.
absl::StatusOr<ShellScript> ParseShell(absl::string_view input,
                                       const ShellParseLimits& limits = {});

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_COMMAND_SHELL_PARSER_H_
