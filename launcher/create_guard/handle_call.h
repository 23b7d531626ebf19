// One trapped call, start to finish: receive it from the listener, have the emulator decide
// (and perform) it, report a refusal, answer. The supervisor calls this whenever the
// listener's fd is readable.
//
//   absl::StatusOr<CallOutcome> outcome = HandleNextCall(listener, emulator, on_violation);
//   if (!outcome.ok()) ...;  // the supervisor's own failure: stop (trapped calls then fail)
//
// `on_violation` runs BEFORE the refused call is answered: whoever hears of the refusal (the
// run's event stream) knows of it before the command can react to it, e.g. print its own
// EACCES. A response that finds the caller gone (NOT_FOUND) is not a failure.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_HANDLE_CALL_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_HANDLE_CALL_H_

#include <functional>

#include "absl/status/statusor.h"
#include "launcher/create_guard/emulator.h"
#include "launcher/create_guard/seccomp_listener.h"

namespace ccsandbox::launcher {

enum class CallOutcome {
  kWithdrawn,  // the call was withdrawn before we received it
  kDropped,    // the caller stopped waiting: not answered
  kContinued,  // left to the kernel (free dirs, existing names, bad arguments)
  kPerformed,  // performed by us (successfully)
  kFailed,     // answered with an errno that is not a refusal
  kRefused,    // refused with EACCES: a violation
};

absl::StatusOr<CallOutcome> HandleNextCall(
    SeccompListener& listener, CreateEmulator& emulator,
    const std::function<void(const CreateViolation&)>& on_violation);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_HANDLE_CALL_H_
