// The real SeccompListener: the supervisor's end of a seccomp user-notification filter, over
// the notify fd's ioctls. Owns the notify fd; closing it (destruction) makes every pending
// and future trapped call of the filter fail with ENOSYS.
//
//   absl::StatusOr<SeccompNotify> notify = SeccompNotify::Create(std::move(fd));
//   poll(notify->fd(), POLLIN) ...
//   absl::StatusOr<seccomp_notif> call = notify->Receive();
//   ... read the caller's memory, then: if (!notify->IdValid(call->id).ok()) drop it
//   ... notify->RespondErrno(call->id, EACCES);
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_SECCOMP_NOTIFY_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_SECCOMP_NOTIFY_H_

#include <linux/seccomp.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"
#include "launcher/create_guard/seccomp_listener.h"

namespace ccsandbox::launcher {

class SeccompNotify : public SeccompListener {
 public:
  // INVALID_ARGUMENT when `fd` is not a seccomp listener.
  static absl::StatusOr<SeccompNotify> Create(UniqueFd fd);

  int fd() const override { return fd_.get(); }

  // Receives the next call: poll fd() for POLLIN first, or this blocks. NOT_FOUND when the
  // call was withdrawn (its caller was killed) between the poll and the receive.
  absl::StatusOr<seccomp_notif> Receive() override;
  // OK while `id` is still waiting for our answer, i.e. its caller has not been killed and
  // its pid still names it; NOT_FOUND once it is not. Check after reading the caller's memory
  // or /proc entries.
  absl::Status IdValid(uint64_t id) override;
  // The call fails with `error` (an errno value), or returns `value`, without running.
  absl::Status RespondErrno(uint64_t id, int error) override;
  absl::Status RespondValue(uint64_t id, int64_t value) override;
  // The kernel runs the call as the caller made it. Only for calls Landlock also bounds: a
  // racing thread may rewrite the call's memory after we looked at it.
  absl::Status RespondContinue(uint64_t id) override;
  // Installs a dup of `fd` in the caller's fd table (close-on-exec if asked), closes `fd`, and
  // only then makes the call return the installed number (SECCOMP_IOCTL_NOTIF_SEND): the
  // caller never runs while our copy is open (ETXTBSY on its next exec of the file). Should
  // the install fail (EMFILE and the like), the call fails with that errno instead.
  absl::Status RespondFd(uint64_t id, UniqueFd fd, bool close_on_exec) override;

 private:
  explicit SeccompNotify(UniqueFd fd, size_t notif_size, size_t resp_size)
      : fd_(std::move(fd)), notif_size_(notif_size), resp_size_(resp_size) {}
  absl::Status Respond(uint64_t id, int64_t value, int error, uint32_t flags);

  UniqueFd fd_;
  size_t notif_size_ = 0;  // the kernel's sizes, which may exceed our headers'
  size_t resp_size_ = 0;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_SECCOMP_NOTIFY_H_
