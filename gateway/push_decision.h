// The push rule, asked for each ref a push updates (the guardrails' "push to remote repository"
// effect, branch-scoped: "deny push_to_remote main", "allow push_to_remote feature/*"; a prompt
// with no approver connected is a deny). All or nothing: if one ref is refused, nothing of the
// push is forwarded, and every ref says why in git's own output. A tag or a ref straight under
// refs/ named like a branch a rule is scoped to is decided as that branch too (git takes
// refs/tags/main for "main" before refs/heads/main).
//
//   PushDecision d = DecidePush(head.updates, rules, /*approver_connected=*/false);
//   if (!d.allowed) Respond(RenderReportStatus("", d.statuses, BandFor(head)));
#ifndef CCSANDBOX_GATEWAY_PUSH_DECISION_H_
#define CCSANDBOX_GATEWAY_PUSH_DECISION_H_

#include <map>
#include <string>
#include <vector>

#include "gateway/receive_pack.h"
#include "gateway/report_status.h"
#include "policy/guardrails/guardrails.h"

namespace ccsandbox::gateway {

// What git prints before the reason: `! [remote rejected] main -> main (<prefix>: <reason>)`.
inline constexpr char kPolicyPrefix[] = "Control Center policy";

struct PushDecision {
  bool allowed = false;
  // One per update, in request order: empty errors when allowed; when refused, each refused
  // ref's reason, and for the others that they were not pushed because another ref was refused.
  std::vector<RefStatus> statuses;
  std::string summary;  // for the log: which ref decided, and by what rule
};

// `symrefs`: the upstream's symbolic refs (name -> target); a push to one is judged for its
// target too, since receive-pack updates the target.
PushDecision DecidePush(const std::vector<RefUpdate>& updates,
                        const policy::GuardrailRuleSet& rules, bool approver_connected,
                        const std::map<std::string, std::string>& symrefs = {});

}  // namespace ccsandbox::gateway

#endif  // CCSANDBOX_GATEWAY_PUSH_DECISION_H_
