#include "broker/microvm/agent_liveness.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ccsandbox::broker::microvm {

bool AgentLiveness::AskNow(absl::Time now) {
  if (timeout_ <= absl::ZeroDuration() || asked_) return false;
  if (now - last_answer_ < timeout_ / 3) return false;
  asked_ = true;
  unanswered_ = absl::ZeroDuration();
  return true;
}

bool AgentLiveness::Heard(absl::Duration waited, std::vector<Frame>* frames, absl::Time now,
                          std::string* error) {
  const auto answer = [](const Frame& frame) {
    return frame.type == FrameType::kHelloReply && frame.payload == kAgentVersion;
  };
  const auto answers = std::remove_if(frames->begin(), frames->end(), answer);
  const bool answered = answers != frames->end();
  frames->erase(answers, frames->end());
  if (answered) {
    asked_ = false;
    last_answer_ = now;
    return true;
  }
  if (!asked_) return true;
  unanswered_ += waited;
  if (unanswered_ < timeout_) return true;
  *error = absl::StrCat("the guest stopped answering: no reply from its agent within ",
                        absl::FormatDuration(timeout_));
  return false;
}

}  // namespace ccsandbox::broker::microvm
