// The spec's `push` (docs/push-gateway.md): at most 64 repositories (http(s) URLs without
// credentials, each once) and at most 256 rules of the push_to_remote effect, each at most 1 KiB;
// native sessions only (a host process could push around the gateway). INVALID_ARGUMENT naming
// the field.
//
//   absl::StatusOr<GuardrailRuleSet> rules = PushRulesOf(spec);  // checked, then parsed
#ifndef CCSANDBOX_POLICY_PLAN_PUSH_SPEC_H_
#define CCSANDBOX_POLICY_PLAN_PUSH_SPEC_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "policy/guardrails/guardrails.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

inline constexpr int kMaxPushRules = 256;
inline constexpr size_t kMaxPushRuleBytes = 1024;

// OK when the spec has no push.
absl::Status ValidatePushSpec(const v1::SandboxSpec& spec, v1::SandboxBackend backend);

// The push rules of a spec that passed ValidatePushSpec.
absl::StatusOr<GuardrailRuleSet> PushRulesOf(const v1::SandboxSpec& spec);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_PUSH_SPEC_H_
