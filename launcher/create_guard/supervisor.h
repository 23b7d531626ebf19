// The launcher side of create-time enforcement of the filename-pattern denies
// for one run: a thread that receives the shim's seccomp notify fd, then
// decides every trapped creation call of the sandbox (CreateEmulator) until the
// sandbox is gone or Stop().
//
//   auto [mine, shims] = *NotifyChannelPair();
//   // spawn bwrap ... -- sandbox_shim --create-guard=<shims' fd> ... with shims inherited;
//   // then close `shims` in the launcher.
//   absl::StatusOr<std::unique_ptr<CreateSupervisor>> guard =
//       CreateSupervisor::Start(options, std::move(mine), on_violation, on_failure);
//   ... run ...
//   guard->reset();  // after the sandbox is reaped
//
// Fail closed: when the supervisor stops or dies for any reason, its notify fd
// closes and every trapped call still waiting, and every later one, fails with
// ENOSYS. A supervisor that falls behind makes callers wait (killably).
// `on_failure` runs once if the supervisor died of an error (not after Stop,
// nor when the sandbox simply ended): report it as the run's error event. Both
// callbacks run on the supervisor's thread; `on_violation` runs BEFORE the
// refused call is answered (so the refusal is known before the command can
// print its own EACCES), and the caller waits meanwhile: keep both short and
// thread-safe.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_SUPERVISOR_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_SUPERVISOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"
#include "launcher/create_guard/decision.h"
#include "launcher/create_guard/emulator.h"
#include "launcher/create_guard/handle_call.h"
#include "policy/plan/create_guard_plan.h"

namespace ccsandbox::launcher {

class CreateSupervisor {
 public:
  struct Options {
    std::vector<std::string> deny_patterns;    // e.g. StandardFilenameDenyPatterns(); may be empty
    std::vector<std::string> trusted_names;    // e.g. StandardTrustedNameRules() + the plan's
    std::vector<std::string> protected_paths;  // absolute: nothing new at or beneath them
    std::vector<std::string> free_dirs;        // the same list the shim got (--free-create)
    std::vector<policy::GuardMount> mounts;    // for violation targets (host paths)
    // Told each trapped call's outcome and how long it was held (from its notification being
    // seen to its answer); may be empty. Runs on the supervisor's thread: keep it short.
    std::function<void(CallOutcome, absl::Duration)> on_call;
  };
  using ViolationCallback = std::function<void(const CreateViolation&)>;
  using FailureCallback = std::function<void(const absl::Status&)>;

  struct Stats {
    uint64_t trapped = 0;    // calls received
    uint64_t continued = 0;  // left to the kernel (free dirs, existing names)
    uint64_t performed = 0;  // performed by us, successfully
    uint64_t failed = 0;     // answered with an error other than a refusal
    uint64_t refused = 0;    // refused by a pattern: violations
  };

  // INVALID_ARGUMENT for a bad pattern. `channel` is the launcher's end of the
  // notify channel (notify_channel.h).
  static absl::StatusOr<std::unique_ptr<CreateSupervisor>> Start(Options options, UniqueFd channel,
                                                                 ViolationCallback on_violation,
                                                                 FailureCallback on_failure);
  // Stops, joins and closes the notify fd.
  ~CreateSupervisor();
  CreateSupervisor(const CreateSupervisor&) = delete;
  CreateSupervisor& operator=(const CreateSupervisor&) = delete;

  // Asks the thread to stop; trapped calls fail (ENOSYS) from then on. Does not
  // wait.
  void Stop();
  // OK while running or after a clean end; otherwise why the supervisor died.
  absl::Status status() const;
  // Stop(), then waits until the thread has ended (every callback has run).
  void Join();
  // After Join(): true when the shim closed the channel without handing over its notify fd,
  // i.e. bwrap or the shim failed before the command started.
  bool never_started() const { return never_started_.load(); }
  // False once the thread has ended (stopped, died, or the sandbox is gone).
  bool running() const { return running_.load(); }
  Stats stats() const;
  // Waits until at least `count` calls have been trapped and handled; false after `timeout`.
  bool AwaitTrapped(uint64_t count, absl::Duration timeout) const;

 private:
  CreateSupervisor() = default;
  void Run(UniqueFd channel);
  absl::Status Serve(UniqueFd channel);
  void Count(CallOutcome outcome);

  Options options_;
  std::optional<CreateRules> rules_;  // checked by Start, handed to the thread's emulator
  ViolationCallback on_violation_;
  FailureCallback on_failure_;
  UniqueFd stop_;  // eventfd
  std::atomic<bool> running_{true};
  std::atomic<bool> never_started_{false};
  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_SUPERVISOR_H_
