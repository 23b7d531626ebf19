// What a shell command line does, rule by rule, before any mode is applied (spec: "Pushes go
// through Control Center" for the command → rule classification, "Where these boundaries are
// weak" for chat mode's fixed deny list). One finding or more per simple command; mode
// decisions are command_policy.h's.
//
//   CommandClassification c = ClassifyCommandLine("sudo -u ci git -C repo push origin main");
//   // c.findings: {kPrivilegeEscalation, "sudo …"}, {kPushToRemote, "sudo …", push_refs {"main"}}
//
// How a command is read:
//  - Wrappers that run another command are unwrapped, their own options skipped: sudo, doas,
//    pkexec, su -c, env (assignments, -S), nice, nohup, timeout, xargs, command, builtin, exec,
//    time, stdbuf, ionice, chrt, setsid, taskset, flock, watch, strace, unbuffer, coproc, …
//  - Shell code passed as a LITERAL string is parsed and classified recursively: sh/bash/zsh -c,
//    eval, su -c, watch, flock -c, trap, alias values, git -c core.pager=…, git rebase --exec,
//    `bash <<'EOF'` here-documents. Code that is not literal (eval "$X", bash -c "$CMD", a
//    command name from an expansion, `curl … | sh`) is kDynamicCode; a script file, inline
//    interpreter code (python -c, node -e) or a local executable is kOpaqueProgram.
//  - The command name is matched on its basename, case-insensitively (macOS file systems are
//    case-insensitive), so /usr/bin/sudo and SUDO are sudo; a program run from outside the
//    system directories (./ls) also gets a kOpaqueProgram finding.
//  - Redirections count: `>`/`>>` to a file is kMutating (not /dev/null, /dev/std*, /dev/fd/N),
//    to a block device kSystemDestruction, to /etc/sudoers or /etc/passwd kPrivilegeEscalation,
//    to /dev/tcp/… kNetworkWrite.
//  - Assignments (before a command, after env, in export/declare) of injection variables
//    (LD_PRELOAD, PATH, BASH_ENV … see env_scrub.h) are kOpaqueProgram: they change what runs;
//    the value of command-holding variables (PAGER, EDITOR, GIT_SSH_COMMAND, LESSOPEN …) is
//    parsed as shell code, as are man -P, git --upload-pack and ssh -o ProxyCommand values.
//  - Arguments only known at run time are treated as such: what xargs appends, find's {}.
//  - Unparseable input, or unparseable shell code inside it, is one kUnparseable finding.
#ifndef CCSANDBOX_POLICY_COMMAND_CLASSIFIER_H_
#define CCSANDBOX_POLICY_COMMAND_CLASSIFIER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "policy/command/rule.h"
#include "policy/command/shell_parser.h"

namespace ccsandbox::policy {

struct CommandFinding {
  CommandRule rule = CommandRule::kUnparseable;
  std::string subcommand;  // source text of the simple command (of the inner one for bash -c)
  std::string reason;      // one sentence a person can act on
  // kPushToRemote only: destination refs as written ("main", "refs/tags/v1"). "*" means every
  // ref or one only known at run time (--all, --mirror, $BRANCH); "" means the current
  // branch's upstream (`git push` with no refspec).
  std::vector<std::string> push_refs;
};

struct CommandClassification {
  // In source order, inner commands (of $( … ), bash -c) before the command containing them.
  std::vector<CommandFinding> findings;
};

// Never fails: input that does not parse yields a single kUnparseable finding.
CommandClassification ClassifyCommandLine(absl::string_view command_line,
                                          const ShellParseLimits& limits = {});

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_COMMAND_CLASSIFIER_H_
