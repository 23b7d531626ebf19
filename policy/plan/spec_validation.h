// Validation of a SandboxSpec at Launch: every error is INVALID_ARGUMENT naming the field. The
// mode is checked with ParseMode (policy/mode.h).
#ifndef CCSANDBOX_POLICY_PLAN_SPEC_VALIDATION_H_
#define CCSANDBOX_POLICY_PLAN_SPEC_VALIDATION_H_

#include "absl/status/status.h"
#include "policy/mode.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

// Checks the input limits (input_limits.h: sizes, NUL, UTF-8), then ids, mode and every path
// field of `spec` for a session on `backend`.
absl::Status ValidateSpec(const v1::SandboxSpec& spec, v1::SandboxBackend backend);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_SPEC_VALIDATION_H_
