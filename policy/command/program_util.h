// Internal to the command classifier: what the per-family program files
// (programs_{privilege,wrappers,shell,git,packages,system_packages,network,system,text}.cc)
// share — getopt-style argument scanning, path normalisation, the Call a handler gets, and each
// family's table entries. Nothing outside policy/command/program*.cc should include it; use
// classifier.h.
//
//   void Rm(const Call& c) {
//     ArgScan s = ScanArgs(c.argv, 1, {}, /*stop_at_operand=*/false);
//     if (s.HasAny({"-r", "-R", "--recursive"})) …
//     c.Add(CommandRule::kMutating, "deletes files");  // reason "rm deletes files"
//   }
#ifndef CCSANDBOX_POLICY_COMMAND_PROGRAM_UTIL_H_
#define CCSANDBOX_POLICY_COMMAND_PROGRAM_UTIL_H_

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "policy/command/programs.h"
#include "policy/command/rule.h"
#include "policy/command/shell_parser.h"

namespace ccsandbox::policy::programs {

using Args = absl::Span<const ShellWord>;
using R = CommandRule;

// ---------------------------------------------------------------------------------------------
// Words and options.

bool OneOf(absl::string_view s, std::initializer_list<absl::string_view> set);

// True when `s` is one of the space-separated words of `list`.
bool InList(absl::string_view s, absl::string_view list);

struct OptSpec {
  absl::string_view short_values;  // short options that take a value ("ugC")
  absl::string_view long_values;   // long options (no dashes) that take a value, space-separated
  bool plus_options = false;       // `+x` words are options too (shells)
};

struct Opt {
  std::string name;  // "-u" or "--user"
  std::string value;
  const ShellWord* value_word = nullptr;  // the separate word holding the value, if any
  bool has_value = false;
};

// The option's value as a word (the separate word when there was one, so its flags survive).
ShellWord OptWord(const Opt& o);

struct ArgScan {
  std::vector<Opt> opts;
  std::vector<size_t> operands;  // indexes into argv
  size_t stop = 0;               // with stop_at_operand: the first operand (argv.size() if none)
  bool dynamic = false;          // a word only known at run time stood where options may be

  const Opt* Find(absl::string_view name) const;  // the last occurrence
  bool Has(absl::string_view name) const { return Find(name) != nullptr; }
  bool HasAny(std::initializer_list<absl::string_view> names) const;
};

// Options as getopt_long reads them, from argv[start]. With `stop_at_operand` the scan ends at
// the first operand (a wrapper's command); otherwise options and operands interleave until `--`.
ArgScan ScanArgs(Args argv, size_t start, const OptSpec& spec, bool stop_at_operand);

// The operands of `scan` as words.
std::vector<const ShellWord*> Operands(Args argv, const ArgScan& scan);

// The index of the first word at or after `start` that is not an option (argv.size() when
// none); `skip_values` names options whose value is the next word.
size_t FirstOperand(Args argv, size_t start, absl::string_view skip_values = "");

bool AnyWord(Args argv, size_t start, std::initializer_list<absl::string_view> set);
bool AnyWordStartsWith(Args argv, size_t start, absl::string_view prefix);

// A word only known at run time (xargs' arguments, find's {}), shown as "<what>".
ShellWord RunTimeWord(absl::string_view what);

// 'text' for messages, shortened.
std::string Quote(absl::string_view s);

// ---------------------------------------------------------------------------------------------
// Paths.

struct NormalPath {
  bool known = false;  // false: relative, or only known at run time
  bool home = false;   // rooted at the user's home directory (~, $HOME) rather than /
  std::vector<std::string> parts;
};

// Lexical normalisation of an absolute or home-relative path word; `..` above the root stays at
// the root, `~/..` becomes /home.
NormalPath Normalize(const ShellWord& w);

// ---------------------------------------------------------------------------------------------
// The call a handler classifies.

struct Call {
  absl::string_view name;  // lower-cased basename
  Args argv;
  ProgramSink& sink;

  // A finding whose reason starts with the program's name: "rm deletes files".
  void Add(CommandRule rule, absl::string_view what) const;
  // A write to `target` ("writes", "copies files to"); nothing for /dev/null and the like.
  void AddWrite(const ShellWord& target, absl::string_view how) const;
  // Classifies a literal code word, or records that the code is only known at run time.
  void Code(const ShellWord& code, absl::string_view how) const;
  // Classifies argv[from…] as the command this one runs.
  void Run(size_t from) const;
};

using Handler = void (*)(const Call&);

struct ProgramEntry {
  Handler fn = nullptr;  // when null: one finding of `rule` saying `what`
  CommandRule rule = R::kUnknownProgram;
  absl::string_view what;
};

struct ProgramGroup {
  absl::string_view names;  // space-separated lower-case program names
  ProgramEntry entry;
};

inline ProgramEntry H(Handler fn) { return ProgramEntry{fn, R::kUnknownProgram, ""}; }
inline ProgramEntry S(CommandRule rule, absl::string_view what) {
  return ProgramEntry{nullptr, rule, what};
}

// Each family's table entries.
std::vector<ProgramGroup> PrivilegePrograms();      // sudo, su, account tools, kernel modules
std::vector<ProgramGroup> WrapperPrograms();        // env, nice, timeout, xargs, watch, strace …
std::vector<ProgramGroup> ShellPrograms();          // shells, eval, source, shell builtins
std::vector<ProgramGroup> GitPrograms();            // git, gh
std::vector<ProgramGroup> PackagePrograms();        // language package managers, build tools
std::vector<ProgramGroup> SystemPackagePrograms();  // apt, dnf, brew, pacman, dpkg, nix …
std::vector<ProgramGroup> NetworkPrograms();        // curl, wget, ssh, cloud CLIs
std::vector<ProgramGroup> SystemPrograms();         // destruction, escape, docker, local changes
std::vector<ProgramGroup> TextPrograms();           // sed, awk, archives, formatters, interpreters

// Handlers and helpers one family borrows from another.
void Install(const Call& c, absl::string_view what);
void Publish(const Call& c, absl::string_view what);
// The subcommand: the first operand at or after argv[start], skipping `skip_values` options'
// values. "" when there is none; "$" when it is only known at run time.
std::string SubWord(const Call& c, size_t* index, absl::string_view skip_values = "",
                    size_t start = 1);
// Records kDynamicCode and returns true when `sub` is "$".
bool DynamicSub(const Call& c, absl::string_view sub);
// `prog --version`, `prog -h` and the like, alone.
bool IsVersionFlag(const Call& c);
// pip's subcommands in `argv` (argv[0] is pip itself); `prefix` says how pip was reached
// ("-m pip"), "" when it is the program.
void Pip(const Call& c, Args argv, absl::string_view prefix);
void PipProgram(const Call& c);
void PythonProjectTool(const Call& c);
void Twine(const Call& c);
void DestroysDisks(const Call& c);
void Interpreter(const Call& c);

}  // namespace ccsandbox::policy::programs

#endif  // CCSANDBOX_POLICY_COMMAND_PROGRAM_UTIL_H_
