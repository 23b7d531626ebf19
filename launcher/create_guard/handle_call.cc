#include "launcher/create_guard/handle_call.h"

namespace ccsandbox::launcher {

absl::StatusOr<CallOutcome> HandleNextCall(
    SeccompListener& listener, CreateEmulator& emulator,
    const std::function<void(const CreateViolation&)>& on_violation) {
  absl::StatusOr<seccomp_notif> call = listener.Receive();
  if (absl::IsNotFound(call.status())) return CallOutcome::kWithdrawn;
  if (!call.ok()) return call.status();

  absl::StatusOr<CreateVerdict> verdict = emulator.Decide(*call, listener);
  if (!verdict.ok()) return verdict.status();
  if (verdict->violation.has_value() && on_violation) on_violation(*verdict->violation);
  absl::Status answered;
  CallOutcome outcome = CallOutcome::kDropped;
  switch (verdict->kind) {
    case CreateVerdict::Kind::kDrop:
      return CallOutcome::kDropped;
    case CreateVerdict::Kind::kContinue:
      outcome = CallOutcome::kContinued;
      answered = listener.RespondContinue(call->id);
      break;
    case CreateVerdict::Kind::kErrno:
      outcome = verdict->violation.has_value() ? CallOutcome::kRefused : CallOutcome::kFailed;
      answered = listener.RespondErrno(call->id, verdict->error);
      break;
    case CreateVerdict::Kind::kValue:
      outcome = CallOutcome::kPerformed;
      answered = listener.RespondValue(call->id, verdict->value);
      break;
    case CreateVerdict::Kind::kFd:
      outcome = CallOutcome::kPerformed;
      answered = listener.RespondFd(call->id, std::move(verdict->fd), verdict->close_on_exec);
      break;
  }
  if (!answered.ok() && !absl::IsNotFound(answered)) return answered;
  return outcome;
}

}  // namespace ccsandbox::launcher
