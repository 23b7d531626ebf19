// What each known program does with its arguments: the per-program knowledge behind
// classifier.h (git and gh subcommands, package managers, network tools, the chat deny
// list, read-only tools, wrappers and shells). The classifier walks the parsed script and hands
// every simple command to ClassifyProgram through a ProgramSink; wrappers and shells hand their
// payload back through the sink, so nesting and depth limits stay the classifier's.
//
//   class MySink : public ProgramSink { … };
//   ClassifyProgram("git", argv, sink);  // argv[0] is the program word as written
//
// Programs that are not in the table are kUnknownProgram. Security-relevant tables (the deny
// list, the block devices, the critical paths) are commented with the threat they stop.
#ifndef CCSANDBOX_POLICY_COMMAND_PROGRAMS_H_
#define CCSANDBOX_POLICY_COMMAND_PROGRAMS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "policy/command/rule.h"
#include "policy/command/shell_parser.h"

namespace ccsandbox::policy {

class ProgramSink {
 public:
  virtual ~ProgramSink() = default;
  // A finding for the simple command being classified.
  virtual void Add(CommandRule rule, std::string reason) = 0;
  // A kPushToRemote finding with its destination refs (see CommandFinding::push_refs).
  virtual void AddPush(std::vector<std::string> refs, std::string reason) = 0;
  // Classifies `argv` as a command the current one runs (a wrapper's payload).
  virtual void RunArgv(absl::Span<const ShellWord> argv) = 0;
  // Parses and classifies `code` as shell code the current command runs; `how` names the
  // construct for messages ("bash -c"). The caller has checked that the code is literal.
  // With `substitutions_only`, only the commands inside $( … ) and backquotes count (a stored
  // value expanded later, not run as a command line).
  virtual void RunCode(absl::string_view code, absl::string_view how,
                       bool substitutions_only = false) = 0;
  // The simple command being classified (its redirections: here-documents feed shells).
  virtual const ShellCommand& Command() const = 0;
};

// Adds the findings for one program invocation; `name` is argv[0]'s lower-cased basename.
void ClassifyProgram(absl::string_view name, absl::Span<const ShellWord> argv, ProgramSink& sink);

// NAME=value, before a command, after env, or in export/declare: names that change what code
// runs (LD_PRELOAD, PATH, BASH_ENV … see env_scrub.h) are kOpaqueProgram, and the value of
// names that hold a command (PAGER, EDITOR, GIT_SSH_COMMAND …) is classified as shell code.
void ClassifyAssignment(const ShellWord& assignment, ProgramSink& sink);

// Where a write (a redirection, dd of=, tee, cp's destination) lands.
enum class WriteTarget {
  kDiscard,        // /dev/null, /dev/stdout, /dev/stderr, /dev/fd/N, /dev/tty
  kFile,           // an ordinary file, or one only known at run time
  kBlockDevice,    // /dev/sda, /dev/nvme0n1, /dev/mapper/…: the disk itself
  kAccountFile,    // /etc/sudoers, /etc/passwd, ~/.ssh/authorized_keys: who may become whom
  kNetwork,        // bash's /dev/tcp/host/port and /dev/udp/host/port
  kSystemControl,  // /proc/sysrq-trigger, /boot/…: the running system or its next boot
};
WriteTarget ClassifyWriteTarget(const ShellWord& target);

// The finding for a write to `target` that `how` describes ("redirects output to"); false for
// kDiscard targets, which need none.
bool DescribeWrite(const ShellWord& target, absl::string_view how, CommandRule* rule,
                   std::string* reason);

// True for `/`, `~`, `$HOME`, `/*`, the top-level system directories and the like, after
// lexical normalisation (`/tmp/..` is `/`): targets whose recursive removal destroys the system
// or the user's home.
bool IsCriticalPath(const ShellWord& word);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_COMMAND_PROGRAMS_H_
