#include "policy/mode.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox::policy {

absl::StatusOr<Mode> ParseMode(absl::string_view mode) {
  if (mode.empty() || mode == "chat") return Mode::kChat;
  if (mode == "review") return Mode::kReview;
  if (mode == "plan") return Mode::kPlan;
  if (mode == "orchestrate") return Mode::kOrchestrate;
  return absl::InvalidArgumentError(
      absl::StrCat("mode: unknown mode '", mode, "'; expected chat, review, plan or orchestrate"));
}

bool ModeIsReadOnly(Mode mode) { return mode != Mode::kChat; }

absl::string_view ModeName(Mode mode) {
  switch (mode) {
    case Mode::kChat:
      return "chat";
    case Mode::kReview:
      return "review";
    case Mode::kPlan:
      return "plan";
    case Mode::kOrchestrate:
      return "orchestrate";
  }
  return "chat";
}

}  // namespace ccsandbox::policy
