// git's subcommands as data (spec: "Pushes go through Control Center"): one row per behaviour,
// naming the subcommands, the argument tests that refine them (an option present or absent, the
// verb, the number of operands) and the rule that decides. The classifier's git handler
// (programs_git.cc) owns everything before the subcommand (global options, `-c key=value`, code
// carried in transport options) and the few actions a row hands back to it (push refspecs,
// config keys, the commands `submodule foreach` and `bisect run` run).
//
//   GitDecision d = DecideGitSubcommand("branch", args);  // args: the words after "branch"
//   // no args:      d.rule == kReadOnly, d.reason == "branch lists branches"
//   // args {"-D"}:  d.rule == kMutating, d.reason == "branch changes branches"
//
// A subcommand that is not in the table is kUnknownProgram: an alias or a git-<sub> program on
// PATH would run.
#ifndef CCSANDBOX_POLICY_COMMAND_GIT_SUBCOMMANDS_H_
#define CCSANDBOX_POLICY_COMMAND_GIT_SUBCOMMANDS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "policy/command/rule.h"
#include "policy/command/shell_parser.h"

namespace ccsandbox::policy {

// What happens when a row (or one of its cases) decides.
enum class GitAction {
  kFinding,           // one finding of `rule`; a kPushToRemote finding pushes every ref ("*")
  kPush,              // git push: its refspecs name the refs
  kConfig,            // git config: reads, writes, or sets a key whose value git runs
  kSubmoduleForeach,  // the words after the verb are shell code (one word) or a command
  kBisectRun,         // checks out commits and runs the words after the verb as a command
};

struct GitOutcome {
  GitAction action = GitAction::kFinding;
  CommandRule rule = CommandRule::kUnknownProgram;  // kFinding only
  absl::string_view what;   // kFinding only: the reason reads "<sub> [<verb>] <what>"
  bool names_verb = false;  // the reason names the verb, when there is one
};

// A test on the words after the subcommand; every part that is set must hold.
struct GitTest {
  // Some word is one of these space-separated options; "--opt" also matches "--opt=value", and
  // "-O*" matches every word that starts with "-O".
  absl::string_view has;
  absl::string_view lacks;  // no word is one of these options (same spelling as `has`)
  bool no_verb = false;     // there is no operand
  absl::string_view verbs;  // the first operand (the verb) is one of these
  int max_operands = -1;    // at most this many operands (-1: any number)
  absl::string_view skip;   // options whose value is the next word, when counting operands
};

struct GitCase {
  GitTest when;
  GitOutcome then;
};

struct GitSubcommand {
  absl::string_view names;     // space-separated, lower case
  std::vector<GitCase> cases;  // tried in order: the first whose test holds decides
  GitOutcome otherwise;        // decides when no case holds
};

// The table: every subcommand name appears in exactly one row.
const std::vector<GitSubcommand>& GitSubcommands();

struct GitDecision {
  const GitSubcommand* row = nullptr;  // null: not a subcommand the table knows
  int case_index = -1;                 // the case that decided; -1: the row's `otherwise`
  GitAction action = GitAction::kFinding;
  CommandRule rule = CommandRule::kUnknownProgram;  // kFinding only
  std::string reason;                               // kFinding only, without the leading "git "
  size_t verb = 0;                                  // index of the verb in args (size: none)
};

// Decides `git <sub> <args…>`; `sub` is already lower-cased.
GitDecision DecideGitSubcommand(absl::string_view sub, absl::Span<const ShellWord> args);

// True when every part of `test` holds for `args`.
bool GitTestHolds(const GitTest& test, absl::Span<const ShellWord> args);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_COMMAND_GIT_SUBCOMMANDS_H_
