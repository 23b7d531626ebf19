// The four modes a session runs in (spec: "The mode's tool surface"), shared by the launch plan
// (read-only bind mounts), the command policy (what each mode lets a command do) and the
// broker's RPCs. Proto-free, so pure rule packages can use it without the generated messages.
//
//   absl::StatusOr<Mode> mode = ParseMode(spec.mode());  // "" -> kChat; "yolo" -> error
//   if (mode.ok() && ModeIsReadOnly(*mode)) { /* bind mounts are read-only */ }
//   ModeName(Mode::kPlan);                                // "plan"
#ifndef CCSANDBOX_POLICY_MODE_H_
#define CCSANDBOX_POLICY_MODE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

enum class Mode { kChat, kReview, kPlan, kOrchestrate };

inline constexpr int kModeCount = static_cast<int>(Mode::kOrchestrate) + 1;

// Every mode, in declaration order.
inline constexpr Mode kAllModes[kModeCount] = {Mode::kChat, Mode::kReview, Mode::kPlan,
                                               Mode::kOrchestrate};

// "" and "chat" -> chat; "review", "plan", "orchestrate"; anything else is INVALID_ARGUMENT
// naming the field ("mode: unknown mode …").
absl::StatusOr<Mode> ParseMode(absl::string_view mode);

// True for the modes whose bind mounts are read-only (review, plan, orchestrate).
bool ModeIsReadOnly(Mode mode);

// "chat", "review", "plan", "orchestrate".
absl::string_view ModeName(Mode mode);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_MODE_H_
