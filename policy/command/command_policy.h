// The shell command policy of each mode (spec: "The mode's tool surface" and "Where these
// boundaries are weak"): a command line in, one decision out. Every simple command — in
// pipelines, lists, subshells, substitutions, `bash -c` strings, wrappers — is classified on its
// own (classifier.h) and the most restrictive decision wins (deny > prompt > allow).
//
//   CommandDecision d = EvaluateCommand(Mode::kPlan, "git status && git commit -m x");
//   // d.verdict == kDeny, d.rule == kCreateCommit, d.subcommand == "git commit -m x"
//
// What each mode decides, rule by rule (CommandRuleVerdict):
//
//   rule                         chat     review / plan / orchestrate
//   unparseable                  deny     deny
//   system_destruction           deny     deny
//   container_escape             deny     deny
//   privilege_escalation         deny     deny
//   push_to_remote               prompt   deny
//   publish_package              prompt   deny
//   open_pull_request            prompt   deny
//   publish_review_or_merge      prompt   deny
//   write_external_tracker       prompt   deny
//   change_remote_state          prompt   deny
//   install_package              prompt   deny
//   dynamic_code                 prompt   deny
//   create_commit                allow    deny
//   network_write                prompt   deny
//   mutating                     allow    deny
//   opaque_program               allow    deny
//   unknown_program              allow    deny
//   network_access               allow    allow
//   read_only                    allow    allow
//
// Chat refuses the spec's fixed list and asks before anything changes state outside this
// machine; everything else runs. The read-only modes allow only what is known to read; a
// program this policy does not know, or code it cannot see, is refused there (fail closed).
// A decision is "not fully analysed" when some part of the line runs code the policy cannot see
// (eval "$X", a script file, python -c); chat asks for the dynamic cases and runs scripts and
// inline interpreter code, flagged; the read-only modes refuse both.
#ifndef CCSANDBOX_POLICY_COMMAND_COMMAND_POLICY_H_
#define CCSANDBOX_POLICY_COMMAND_COMMAND_POLICY_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "policy/command/classifier.h"
#include "policy/command/rule.h"
#include "policy/command/shell_parser.h"
#include "policy/mode.h"
#include "policy/verdict.h"

namespace ccsandbox::policy {

struct CommandDecision {
  PolicyVerdict verdict = PolicyVerdict::kDeny;
  CommandRule rule = CommandRule::kUnparseable;  // the rule of the deciding finding
  std::string subcommand;                        // the simple command that decided
  std::string reason;                            // one line for the agent and the operator
  // False when some part of the line runs code the policy cannot see (see the file comment).
  bool fully_analysed = false;
  std::vector<CommandFinding> findings;  // every finding, in source order
};

// What `mode` decides for a command of `rule` (the table above).
PolicyVerdict CommandRuleVerdict(Mode mode, CommandRule rule);

// Never fails: input that does not parse, or is too big to analyse, is a kDeny decision.
CommandDecision EvaluateCommand(Mode mode, absl::string_view command_line,
                                const ShellParseLimits& limits = {});

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_COMMAND_COMMAND_POLICY_H_
