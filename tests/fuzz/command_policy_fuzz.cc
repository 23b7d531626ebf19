// libFuzzer target for the shell command policy: the parser, the classifier and every mode's
// decision. Built and run by tests/fuzz/run_fuzz.sh, not by `bazel test`.
// Invariants (a violation traps, so libFuzzer keeps the input):
//  - nothing crashes, hangs or reads out of bounds (ASan, UBSan, -timeout);
//  - input the parser rejects is denied in every mode, as unparseable, with a reason;
//  - any unparseable finding (shell code inside the line) makes every mode deny;
//  - the read-only modes never prompt, agree with each other, and are never more permissive
//    than chat;
//  - the decision names a finding that exists, and its verdict is the most restrictive one.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "policy/command/command_policy.h"
#include "policy/command/shell_parser.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using ccsandbox::policy::CommandDecision;
using ccsandbox::policy::CommandFinding;
using ccsandbox::policy::CommandRule;
using ccsandbox::policy::CommandRuleVerdict;
using ccsandbox::policy::EvaluateCommand;
using ccsandbox::policy::Mode;
using ccsandbox::policy::ParseShell;
using ccsandbox::policy::PolicyVerdict;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view line(reinterpret_cast<const char*>(data), size);
  const bool parses = ParseShell(line).ok();
  const Mode modes[] = {Mode::kChat, Mode::kReview, Mode::kPlan, Mode::kOrchestrate};
  PolicyVerdict verdicts[4];
  for (int m = 0; m < 4; ++m) {
    CommandDecision d = EvaluateCommand(modes[m], line);
    verdicts[m] = d.verdict;
    FUZZ_CHECK(!d.reason.empty());
    if (!parses) {
      FUZZ_CHECK(d.verdict == PolicyVerdict::kDeny && d.rule == CommandRule::kUnparseable);
      FUZZ_CHECK(d.findings.size() == 1 && !d.fully_analysed);
    }
    bool any_unparseable = false;
    bool decider_found = d.findings.empty();
    PolicyVerdict worst = PolicyVerdict::kAllow;
    for (const CommandFinding& f : d.findings) {
      any_unparseable = any_unparseable || f.rule == CommandRule::kUnparseable;
      worst = ccsandbox::policy::MostRestrictive(worst, CommandRuleVerdict(modes[m], f.rule));
      decider_found = decider_found || (f.rule == d.rule && f.subcommand == d.subcommand);
      FUZZ_CHECK(!f.reason.empty());
    }
    if (any_unparseable) FUZZ_CHECK(d.verdict == PolicyVerdict::kDeny);
    FUZZ_CHECK(decider_found);
    FUZZ_CHECK(d.findings.empty() ? d.verdict == PolicyVerdict::kAllow : d.verdict == worst);
  }
  for (int m = 1; m < 4; ++m) {
    FUZZ_CHECK(verdicts[m] != PolicyVerdict::kPrompt);
    FUZZ_CHECK(verdicts[m] == verdicts[1]);
    FUZZ_CHECK(verdicts[m] >= verdicts[0] || verdicts[0] == PolicyVerdict::kPrompt);
  }
  return 0;
}
