#include "policy/command/command_policy.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ccsandbox::policy {

PolicyVerdict CommandRuleVerdict(Mode mode, CommandRule rule) {
  using R = CommandRule;
  switch (rule) {
    case R::kNetworkAccess:
    case R::kReadOnly:
      return PolicyVerdict::kAllow;
    case R::kUnparseable:
    case R::kSystemDestruction:
    case R::kContainerEscape:
    case R::kPrivilegeEscalation:
      return PolicyVerdict::kDeny;
    default:
      break;
  }
  // The read-only modes refuse every command not known to only read, without asking.
  if (mode != Mode::kChat) return PolicyVerdict::kDeny;
  switch (rule) {
    case R::kPushToRemote:
    case R::kPublishPackage:
    case R::kOpenPullRequest:
    case R::kPublishReviewOrMerge:
    case R::kWriteExternalTracker:
    case R::kChangeRemoteState:
    case R::kInstallPackage:
    case R::kNetworkWrite:
    case R::kDynamicCode:
      return PolicyVerdict::kPrompt;
    default:
      return PolicyVerdict::kAllow;
  }
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
    // Most restrictive verdict; among equals, the rule listed first in command_rule.h.
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
