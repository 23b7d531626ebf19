// Unified action guardrails (spec: "Unified action guardrails", "Pushes go through Control
// Center", "Confirmations come from the guardrails, not from the sandbox"): every mutating tool
// declares the effect classes it can produce; a rule set maps each class — and, for pushes, the
// destination ref — to allow, prompt or deny; the decision is made before anything runs. The same
// rules apply whatever runs the agent (harness, ACP adapter, Claude Code hook, push gateway).
//
//   absl::StatusOr<GuardrailRuleSet> rules = ParseGuardrailRules({
//       "allow push_to_remote", "deny push_to_remote main", "prompt install_package"});
//   ActionRequest request;
//   request.effects = {{EffectClass::kPushToRemote, {"main"}}};
//   request.approver_connected = false;
//   GuardrailDecision d = ResolveAction(request, *rules);
//   // d.verdict == kDeny, d.decided_by->rule_index == 1 ("deny push_to_remote main")
//
// Resolution, per effect (and per ref for pushes):
//  1. Rules for other effect classes are ignored.
//  2. For a push, rules with a ref pattern that matches the ref win over rules without one, so
//     "allow push_to_remote" + "deny push_to_remote main" denies main and allows the rest.
//  3. Among the winning rules, the most restrictive verdict (deny > prompt > allow).
//  4. No rule at all: the rule set's default verdict (prompt unless set otherwise).
// A ref only known at run time ("*", or "" with no current branch given) could be any branch,
// so every rule of its effect class applies and the most restrictive wins.
// The action's verdict is the most restrictive over its effects. Then fail closed: a prompt with
// no connected approver is a deny ("a question nobody answers is never counted as consent"),
// and the decision says so.
//
// Ref patterns: "main" means refs/heads/main, "v1.*" refs/heads/v1.*, "refs/tags/*" is taken as
// written; `*` matches any run of characters (including '/'), `?` one character; "*" alone
// matches every ref.
#ifndef CCSANDBOX_POLICY_GUARDRAILS_GUARDRAILS_H_
#define CCSANDBOX_POLICY_GUARDRAILS_GUARDRAILS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "policy/verdict.h"

namespace ccsandbox::policy {

// What a mutating action can do. Ids (EffectClassId) are stable: rules, protos, logs.
enum class EffectClass {
  kCreateCommit,          // create_commit
  kPushToRemote,          // push_to_remote (ref-scoped)
  kOpenPullRequest,       // open_pull_request
  kPublishReviewOrMerge,  // publish_review_or_merge
  kWriteExternalTracker,  // write_external_tracker
  kInstallPackage,        // install_package
  kPublishPackage,        // publish_package
  kNetworkAccess,         // network_access
  kChangeRemoteState,     // change_remote_state: other remote writes (gh api POST, deploys)
  kWriteFiles,            // write_files: create or change files in the workspace
  kDeleteFiles,           // delete_files
  kRunCommand,            // run_command: a shell command whose effects are not declared
};

inline constexpr int kEffectClassCount = static_cast<int>(EffectClass::kRunCommand) + 1;

absl::string_view EffectClassId(EffectClass effect);
// Human wording ("push to remote repository"), from the spec where it names the rule.
absl::string_view EffectClassName(EffectClass effect);
std::optional<EffectClass> EffectClassFromId(absl::string_view id);

struct GuardrailRule {
  EffectClass effect = EffectClass::kRunCommand;
  // kPushToRemote only: the destination refs this rule is scoped to; "" for every ref.
  std::string ref_pattern;
  PolicyVerdict verdict = PolicyVerdict::kPrompt;
};

struct GuardrailRuleSet {
  std::vector<GuardrailRule> rules;
  // For effect classes no rule mentions: ask first.
  PolicyVerdict default_verdict = PolicyVerdict::kPrompt;
};

// Checks a rule set built elsewhere (e.g. from a proto): a ref pattern only on push_to_remote,
// and patterns that are valid ref names or globs.
absl::Status ValidateGuardrailRules(const GuardrailRuleSet& rules);

// "<allow|prompt|deny> <effect id> [<ref pattern>]", e.g. "deny push_to_remote main".
absl::StatusOr<GuardrailRule> ParseGuardrailRule(absl::string_view text);
absl::StatusOr<GuardrailRuleSet> ParseGuardrailRules(absl::Span<const std::string> lines);
// The inverse of ParseGuardrailRule.
std::string FormatGuardrailRule(const GuardrailRule& rule);

struct EffectRequest {
  EffectClass effect = EffectClass::kRunCommand;
  // kPushToRemote only: destination refs as written ("main", "refs/tags/v1"); "" is the current
  // branch, "*" a ref only known at run time. Empty means the current branch.
  std::vector<std::string> refs;
};

struct ActionRequest {
  std::vector<EffectRequest> effects;  // what the tool call declares; none: nothing to guard
  std::string current_branch;          // resolves "" refs; "" when unknown
  bool approver_connected = false;     // a person who can answer a prompt is connected now
};

// How one effect (one ref, for pushes) resolved.
struct EffectResolution {
  EffectClass effect = EffectClass::kRunCommand;
  std::string ref;  // kPushToRemote: the full ref ("refs/heads/main") or "*"
  PolicyVerdict verdict = PolicyVerdict::kPrompt;
  int rule_index = -1;  // the deciding rule in GuardrailRuleSet::rules; -1: default
};

struct GuardrailDecision {
  PolicyVerdict verdict = PolicyVerdict::kDeny;       // final, after failing closed
  PolicyVerdict rule_verdict = PolicyVerdict::kDeny;  // what the rules said
  bool denied_for_no_approver = false;         // rule_verdict was prompt and nobody could answer
  std::optional<EffectResolution> decided_by;  // the most restrictive resolution; none: no effects
  std::string reason;
  std::vector<EffectResolution> resolutions;  // every effect (and ref), in request order
};

GuardrailDecision ResolveAction(const ActionRequest& request, const GuardrailRuleSet& rules);

// "refs/heads/main" for "main"; refs/… and "*" unchanged.
std::string NormalizeRef(absl::string_view ref);

// True when the ref pattern (see the file comment) matches `ref` (both normalised first).
bool RefPatternMatches(absl::string_view pattern, absl::string_view ref);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_GUARDRAILS_GUARDRAILS_H_
