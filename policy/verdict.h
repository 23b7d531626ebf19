// The three outcomes every policy decision in this subsystem ends in: the shell command policy,
// the action guardrails and (through them) the broker's policy RPCs. Ordered by restrictiveness,
// so combining decisions is a max; the numeric values are `sandboxctl policy check`'s exit codes.
//
//   PolicyVerdict v = MostRestrictive(PolicyVerdict::kAllow, PolicyVerdict::kPrompt);  // kPrompt
//   std::cout << PolicyVerdictName(v);                                                 // "prompt"
#ifndef CCSANDBOX_POLICY_VERDICT_H_
#define CCSANDBOX_POLICY_VERDICT_H_

#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

enum class PolicyVerdict { kAllow = 0, kPrompt = 1, kDeny = 2 };

// deny > prompt > allow.
constexpr PolicyVerdict MostRestrictive(PolicyVerdict a, PolicyVerdict b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

// "allow", "prompt", "deny".
constexpr absl::string_view PolicyVerdictName(PolicyVerdict verdict) {
  switch (verdict) {
    case PolicyVerdict::kAllow:
      return "allow";
    case PolicyVerdict::kPrompt:
      return "prompt";
    case PolicyVerdict::kDeny:
      return "deny";
  }
  return "deny";
}

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_VERDICT_H_
