// Whether a guest still answers (docs/microvm.md, "A hung guest"): a guest whose kernel or agent
// hangs without panicking or exiting would otherwise hold its session `warm` forever. The host
// asks (kHello, which the agent answers with kHelloReply at any time, between a run's frames
// too) every `timeout / 3`; a question left unanswered for `timeout` of the host's own waiting on
// the channel means the guest is hung. Only time spent waiting on the channel counts, so a host
// that is busy elsewhere (a slow client holding a run's output, which backs up into the guest)
// never blames the guest for it.
//
//   AgentLiveness liveness(absl::Seconds(30));
//   if (liveness.AskNow(now)) channel.Queue(FrameType::kHello, "");
//   ... pump for `waited`, frames in ...
//   if (!liveness.Heard(waited, &frames, now, &error)) -> the guest is hung (`error` says so)
#ifndef CCSANDBOX_BROKER_MICROVM_AGENT_LIVENESS_H_
#define CCSANDBOX_BROKER_MICROVM_AGENT_LIVENESS_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "broker/microvm/agent_frame.h"

namespace ccsandbox::broker::microvm {

class AgentLiveness {
 public:
  // `timeout` zero or less: never asks, never concludes.
  explicit AgentLiveness(absl::Duration timeout) : timeout_(timeout) {}

  // True when a question is due at `now` (none outstanding and the last answer is older than
  // timeout / 3): the caller queues a kHello.
  bool AskNow(absl::Time now);
  // After the host waited `waited` on the channel and read `frames`: takes the answers out of
  // `frames` (a kHelloReply that does not carry kAgentVersion is left there: not an answer).
  // False, with why in `error`, once the outstanding question has gone unanswered for the
  // timeout.
  bool Heard(absl::Duration waited, std::vector<Frame>* frames, absl::Time now, std::string* error);

 private:
  absl::Duration timeout_;
  bool asked_ = false;
  absl::Duration unanswered_ = absl::ZeroDuration();  // waited on the channel since asking
  absl::Time last_answer_ = absl::InfinitePast();
};

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_AGENT_LIVENESS_H_
