// Validation of a SandboxSpec at Launch: every error is INVALID_ARGUMENT naming the field.
#ifndef CCSANDBOX_POLICY_PLAN_SPEC_VALIDATION_H_
#define CCSANDBOX_POLICY_PLAN_SPEC_VALIDATION_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

enum class Mode { kChat, kReview, kPlan, kOrchestrate };

// "" and "chat" -> chat; "review", "plan", "orchestrate"; anything else is an error.
absl::StatusOr<Mode> ParseMode(absl::string_view mode);

// True for the modes whose bind mounts are read-only (review, plan, orchestrate).
bool ModeIsReadOnly(Mode mode);

// Checks the input limits (input_limits.h: sizes, NUL, UTF-8), then ids, mode and every path
// field of `spec` for a session on `backend`.
absl::Status ValidateSpec(const v1::SandboxSpec& spec, v1::SandboxBackend backend);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_SPEC_VALIDATION_H_
