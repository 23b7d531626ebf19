// The supervisor's side of a seccomp user-notification filter, behind a small interface so
// the emulator can run against a fake: receive a trapped call, check it still waits, answer
// it. The real one is SeccompNotify (seccomp_notify.h), which owns the notify fd.
//
//   absl::StatusOr<seccomp_notif> call = listener.Receive();   // after poll(fd(), POLLIN)
//   ... read the caller's memory, then: if (!listener.IdValid(call->id).ok()) drop it
//   listener.RespondErrno(call->id, EACCES);
//
// Responses return NOT_FOUND when the caller is gone (killed while waiting): not an error of
// the supervisor. Every other failure is.
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_SECCOMP_LISTENER_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_SECCOMP_LISTENER_H_

#include <linux/seccomp.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher {

class SeccompListener {
 public:
  virtual ~SeccompListener() = default;

  // The fd to poll for POLLIN before Receive.
  virtual int fd() const = 0;
  // The next trapped call; NOT_FOUND when it was withdrawn (its caller killed) before we took it.
  virtual absl::StatusOr<seccomp_notif> Receive() = 0;
  // OK while `id` still waits for our answer (its caller alive, its pid still naming it).
  virtual absl::Status IdValid(uint64_t id) = 0;
  // The call fails with `error` (an errno value) without running.
  virtual absl::Status RespondErrno(uint64_t id, int error) = 0;
  // The call returns `value` without running (we performed it).
  virtual absl::Status RespondValue(uint64_t id, int64_t value) = 0;
  // The kernel runs the call as made: only for what Landlock also bounds.
  virtual absl::Status RespondContinue(uint64_t id) = 0;
  // A dup of `fd` lands in the caller (close-on-exec if asked) and the call returns its number.
  // `fd` is closed before the caller resumes: an open writable copy here would make the caller's
  // next exec of the file it just wrote fail with ETXTBSY (cp x; ./x).
  virtual absl::Status RespondFd(uint64_t id, UniqueFd fd, bool close_on_exec) = 0;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_SECCOMP_LISTENER_H_
