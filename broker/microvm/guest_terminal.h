// The host's half of a terminal in a microVM (docs/microvm.md, "Terminals"): Guest::Terminal's
// GuestTerminal for a runtime whose guest runs the agent (agent_frame.h). A thread of the
// terminal's own holds the guest for it (one run or terminal at a time), sends the open request,
// the keystrokes, resizes, signals and the hang-up as frames, and turns the agent's frames into
// the output and exit callbacks; it ends after exactly one exit.
//
//   class QemuGuest : public Guest, private TerminalAgent { ... };
//   return OpenGuestTerminal(this, command, rows, cols, std::move(callbacks));
//
// Close(grace) hangs up (SIGHUP to the session), and SIGKILLs everything after `grace`; a guest
// that still does not end the terminal 10 s later is lost (powered off, in error). A guest that
// dies, breaks its channel or is stopped ends the terminal with -SIGKILL and the cause.
#ifndef CCSANDBOX_BROKER_MICROVM_GUEST_TERMINAL_H_
#define CCSANDBOX_BROKER_MICROVM_GUEST_TERMINAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "broker/microvm/agent_frame.h"
#include "broker/microvm/runtime.h"

namespace ccsandbox::broker::microvm {

// What a terminal needs of its guest. Every call is made on the terminal's thread.
class TerminalAgent {
 public:
  virtual ~TerminalAgent() = default;
  // Takes the guest for the terminal until Release: warm becomes active. FAILED_PRECONDITION
  // while a run or terminal has it, or when it is not warm.
  virtual absl::Status Acquire() = 0;
  virtual void Queue(FrameType type, const std::string& payload) = 0;
  // Waits up to `wait` (or until `wake_fd` is readable), sends what it can and returns the
  // agent's frames. False and why once the guest is gone or being stopped.
  virtual bool Pump(absl::Duration wait, int wake_fd, std::vector<Frame>* frames,
                    std::string* error) = 0;
  // The guest went away mid-terminal (`why`): it is powered off and in error unless it was
  // being stopped. The cause the exit carries.
  virtual std::string Lost(const std::string& why) = 0;
  // The terminal has ended (its exit delivered): active becomes warm.
  virtual void Release() = 0;
};

// After the SIGKILL of a run or terminal, how long a live guest may take to report its end; a
// guest that does not is hung: powered off and in error.
inline constexpr absl::Duration kKillAnswer = absl::Seconds(10);

// The largest Input taken at once (as the native relay's): more is INVALID_ARGUMENT.
inline constexpr size_t kMaxTerminalInput = 1 << 20;

// The shell of a terminal whose argv is empty: $SHELL of its environment when that is an
// absolute path, else /bin/sh; interactive (-i).
std::vector<std::string> TerminalArgv(const GuestCommand& command);

// Opens a terminal of `rows` x `cols` (policy::ValidTerminalSize, else INVALID_ARGUMENT) running
// `command` (its stdin_data, timeout and stop_requested are not used) once `agent` has given
// the guest (Acquire's error otherwise). A command the guest cannot start (chdir, exec) still
// opens: its reason is the output and its exit 127, as from a shell. `agent` must outlive the
// terminal's thread: the guest's Stop waits for Release.
absl::StatusOr<std::unique_ptr<GuestTerminal>> OpenGuestTerminal(TerminalAgent* agent,
                                                                 const GuestCommand& command,
                                                                 uint16_t rows, uint16_t cols,
                                                                 TerminalCallbacks callbacks);

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_GUEST_TERMINAL_H_
