// gh's commands as data (spec: "Pushes go through Control Center" — pull requests, reviews and
// the issue tracker): one row per behaviour, naming the commands (`gh <command> <verb>`), the
// verbs that refine them and the rule that decides. The classifier's gh handler
// (programs_git.cc) owns what comes before (finding the command and the verb among gh's options,
// --version and --help) and the one action a row hands back to it (the request method of
// `gh api`).
//
//   GhDecision d = DecideGhCommand("pr", "create");
//   // d.rule == kOpenPullRequest, d.reason == "pr create opens a pull request"
//   d = DecideGhCommand("issue", "list");
//   // d.rule == kNetworkAccess, d.reason == "issue list reads from GitHub"
//
// A command that is not in the table is kUnknownProgram: an alias or an extension would run.
#ifndef CCSANDBOX_POLICY_COMMAND_GH_SUBCOMMANDS_H_
#define CCSANDBOX_POLICY_COMMAND_GH_SUBCOMMANDS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "policy/command/rule.h"

namespace ccsandbox::policy {

// What happens when a row (or one of its cases) decides.
enum class GhAction {
  kFinding,  // one finding of `rule`
  // gh api: the finding when the request only reads (GET, HEAD); the handler reads the method,
  // and any other method changes GitHub.
  kApi,
};

struct GhOutcome {
  GhAction action = GhAction::kFinding;
  CommandRule rule = CommandRule::kUnknownProgram;
  absl::string_view what;     // the reason reads "<command> [<verb>] <what>"
  bool names_command = true;  // false: the reason is `what` alone
};

// The verb (the second word that is not an option) is one of `verbs`, space-separated.
struct GhCase {
  absl::string_view verbs;
  GhOutcome then;
};

struct GhCommand {
  absl::string_view names;    // space-separated, as gh spells them (lower case)
  std::vector<GhCase> cases;  // tried in order: the first whose verbs hold the verb decides
  GhOutcome otherwise;        // decides when no case holds (also when there is no verb)
};

// The table: every command name appears in exactly one row.
const std::vector<GhCommand>& GhCommands();

struct GhDecision {
  const GhCommand* row = nullptr;  // null: not a command the table knows
  int case_index = -1;             // the case that decided; -1: the row's `otherwise`
  GhAction action = GhAction::kFinding;
  CommandRule rule = CommandRule::kUnknownProgram;
  std::string reason;  // without the leading "gh "
};

// Decides `gh <command> <verb>`; `verb` is "" when there is none. Both are matched as written
// (gh's commands are case-sensitive).
GhDecision DecideGhCommand(absl::string_view command, absl::string_view verb);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_COMMAND_GH_SUBCOMMANDS_H_
