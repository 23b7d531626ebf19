// The rules a shell command can fall under (spec: "Pushes go through Control Center" for the
// guardrail rules, "Where these boundaries are weak" for chat mode's fixed deny list), in
// priority order: when several sub-commands reach the same verdict, the earliest rule in this
// list names the decision. What each rule means in each mode is command_policy.h's table.
//
//   CommandRuleName(CommandRule::kPushToRemote)  // "push to remote repository"
//   CommandRuleId(CommandRule::kPushToRemote)    // "push_to_remote" (stable: data files, protos)
#ifndef CCSANDBOX_POLICY_COMMAND_RULE_H_
#define CCSANDBOX_POLICY_COMMAND_RULE_H_

#include <optional>

#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

enum class CommandRule {
  kUnparseable,           // the line (or shell code inside it) does not parse, or is too big
  kSystemDestruction,     // rm -rf /, mkfs, dd to a disk, fork bomb, shutdown
  kContainerEscape,       // nsenter, unshare, chroot, mount, docker run --privileged
  kPrivilegeEscalation,   // sudo, su, doas, pkexec, setuid bits, account changes
  kPushToRemote,          // git push
  kPublishPackage,        // npm publish, cargo publish, twine upload, docker push
  kOpenPullRequest,       // gh pr create
  kPublishReviewOrMerge,  // gh pr merge/review/comment/close
  kWriteExternalTracker,  // gh issue create/edit/comment/close
  kChangeRemoteState,     // gh repo/api/workflow writes, kubectl apply: other remote changes
  kInstallPackage,        // npm install, pip install, apt-get install, cargo add
  kDynamicCode,           // eval "$X", bash -c "$X", $CMD, curl … | sh: code nobody can see
  kCreateCommit,          // git commit/merge/rebase/cherry-pick/revert/am/pull
  kNetworkWrite,          // network access that sends data: curl -d, scp to a host, ssh host cmd
  kMutating,              // changes local state: files, the repository, processes, containers
  kOpaqueProgram,         // a script file, inline interpreter code, a local executable
  kUnknownProgram,        // a program this policy has no entry for
  kNetworkAccess,         // network access that only reads: curl URL, git ls-remote
  kReadOnly,              // reads only: ls, cat, grep, git status/log/diff
};

inline constexpr int kCommandRuleCount = static_cast<int>(CommandRule::kReadOnly) + 1;

// Human wording, from the spec where the spec names the rule.
absl::string_view CommandRuleName(CommandRule rule);

// Stable snake_case identifier.
absl::string_view CommandRuleId(CommandRule rule);

// Inverse of CommandRuleId.
std::optional<CommandRule> CommandRuleFromId(absl::string_view id);

// False for the rules that mean "the policy could not see what actually runs".
bool CommandRuleFullyAnalysed(CommandRule rule);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_COMMAND_RULE_H_
