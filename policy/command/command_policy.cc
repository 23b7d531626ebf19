#include "policy/command/command_policy.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ccsandbox::policy {
namespace {

using R = CommandRule;
constexpr PolicyVerdict kAllow = PolicyVerdict::kAllow;
constexpr PolicyVerdict kPrompt = PolicyVerdict::kPrompt;
constexpr PolicyVerdict kDeny = PolicyVerdict::kDeny;

struct RuleRow {
  CommandRule rule;
  PolicyVerdict by_mode[kModeCount];  // chat, review, plan, orchestrate (Mode's order)
};

// The table in command_policy.h, one row per rule in rule.h's order. Chat refuses the fixed
// deny list and asks before anything changes state outside this machine; the read-only modes
// refuse every command not known to only read, without asking.
constexpr RuleRow kRuleVerdicts[kCommandRuleCount] = {
    // rule, {chat, review, plan, orchestrate}
    {R::kUnparseable, {kDeny, kDeny, kDeny, kDeny}},
    {R::kSystemDestruction, {kDeny, kDeny, kDeny, kDeny}},
    {R::kContainerEscape, {kDeny, kDeny, kDeny, kDeny}},
    {R::kPrivilegeEscalation, {kDeny, kDeny, kDeny, kDeny}},
    {R::kPushToRemote, {kPrompt, kDeny, kDeny, kDeny}},
    {R::kPublishPackage, {kPrompt, kDeny, kDeny, kDeny}},
    {R::kOpenPullRequest, {kPrompt, kDeny, kDeny, kDeny}},
    {R::kPublishReviewOrMerge, {kPrompt, kDeny, kDeny, kDeny}},
    {R::kWriteExternalTracker, {kPrompt, kDeny, kDeny, kDeny}},
    {R::kChangeRemoteState, {kPrompt, kDeny, kDeny, kDeny}},
    {R::kInstallPackage, {kPrompt, kDeny, kDeny, kDeny}},
    {R::kDynamicCode, {kPrompt, kDeny, kDeny, kDeny}},
    {R::kCreateCommit, {kAllow, kDeny, kDeny, kDeny}},
    {R::kNetworkWrite, {kPrompt, kDeny, kDeny, kDeny}},
    {R::kMutating, {kAllow, kDeny, kDeny, kDeny}},
    {R::kOpaqueProgram, {kAllow, kDeny, kDeny, kDeny}},
    {R::kUnknownProgram, {kAllow, kDeny, kDeny, kDeny}},
    {R::kNetworkAccess, {kAllow, kAllow, kAllow, kAllow}},
    {R::kReadOnly, {kAllow, kAllow, kAllow, kAllow}},
};

constexpr bool RowsFollowRuleOrder() {
  for (int i = 0; i < kCommandRuleCount; ++i) {
    if (static_cast<int>(kRuleVerdicts[i].rule) != i) return false;
  }
  return true;
}
static_assert(RowsFollowRuleOrder(), "kRuleVerdicts must list every rule in rule.h's order");

}  // namespace

PolicyVerdict CommandRuleVerdict(Mode mode, CommandRule rule) {
  return kRuleVerdicts[static_cast<int>(rule)].by_mode[static_cast<int>(mode)];
}

CommandDecision EvaluateCommand(Mode mode, absl::string_view command_line,
                                const ShellParseLimits& limits) {
  CommandDecision d;
  CommandClassification c = ClassifyCommandLine(command_line, limits);
  d.findings = std::move(c.findings);
  if (d.findings.empty()) {
    d.verdict = PolicyVerdict::kAllow;
    d.rule = CommandRule::kReadOnly;
    d.fully_analysed = true;
    d.reason = "the command line runs nothing";
    return d;
  }
  const CommandFinding* decider = nullptr;
  PolicyVerdict verdict = PolicyVerdict::kAllow;
  d.fully_analysed = true;
  for (const CommandFinding& f : d.findings) {
    d.fully_analysed = d.fully_analysed && CommandRuleFullyAnalysed(f.rule);
    const PolicyVerdict v = CommandRuleVerdict(mode, f.rule);
    // Most restrictive verdict; among equals, the rule listed first in rule.h.
    if (decider == nullptr || v > verdict || (v == verdict && f.rule < decider->rule)) {
      decider = &f;
      verdict = v;
    }
  }
  d.verdict = verdict;
  d.rule = decider->rule;
  d.subcommand = decider->subcommand;
  absl::string_view outcome = verdict == PolicyVerdict::kDeny     ? "refused"
                              : verdict == PolicyVerdict::kPrompt ? "needs approval"
                                                                  : "allowed";
  d.reason = absl::StrCat(decider->reason, " — ", CommandRuleName(decider->rule), ": ", outcome,
                          " in ", ModeName(mode), " mode");
  if (!d.fully_analysed) {
    absl::StrAppend(&d.reason, " (the command line could not be fully analysed)");
  }
  return d;
}

}  // namespace ccsandbox::policy
