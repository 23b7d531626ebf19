// The words stderr lines use for a denied call, as data: the errno texts, verb phrases (which
// operand they name and which action they mean), system-call names, programs that print no verb,
// Node's fs calls. parser.cc reads lines with them. Pure.
#ifndef CCSANDBOX_POLICY_VIOLATIONS_VOCABULARY_H_
#define CCSANDBOX_POLICY_VIOLATIONS_VOCABULARY_H_

#include <array>
#include <optional>
#include <utility>

#include "absl/strings/string_view.h"

namespace ccsandbox::policy::violations {

enum class Errno { kEacces, kEperm, kErofs };

// strerror(3) texts, lower-cased; Node and Go print them lower-case.
inline constexpr std::array<std::pair<absl::string_view, Errno>, 3> kMarkers = {{
    {"permission denied", Errno::kEacces},
    {"operation not permitted", Errno::kEperm},
    {"read-only file system", Errno::kErofs},
}};

// How a verb phrase's operand and action are read.
enum class Rule {
  kRead,
  kWrite,
  kWriteDest,         // "cannot move A to B": B is created
  kWriteNamedBefore,  // tar's "X: Cannot change mode to M": X is written, M is no path
  kExec,
  kOpen,      // " for reading"/" for writing" decide; a shell's is a read
  kCopyDest,  // reads A or writes B: undeterminable, B reported
  kMount,
  kSyscall,  // a non-file call, named by the phrase
};

struct Verb {
  absl::string_view phrase;
  Rule rule;
  absl::string_view syscall;
};

// The longest verb phrase `component` starts with (case-insensitive, whole words).
std::optional<Verb> MatchVerb(absl::string_view component);

// The system call `component` names as a whole ("ptrace", "ptrace(PTRACE_SEIZE, 1)",
// "unshare failed").
std::optional<absl::string_view> MatchSyscall(absl::string_view component);

// What a program that prints "prog: X: error" without a verb does to X; file-access* when unknown.
absl::string_view ProgramAction(absl::string_view program);

// The action of Node's fs call `syscall` ("open", "scandir", "spawn"...); file-access* when
// unknown.
absl::string_view NodeSyscallAction(absl::string_view syscall);

// bash, sh, zsh...: shells whose "prog: X: error" lines the parser reads as a shell's.
bool IsBashLikeShell(absl::string_view program);

}  // namespace ccsandbox::policy::violations

#endif  // CCSANDBOX_POLICY_VIOLATIONS_VOCABULARY_H_
