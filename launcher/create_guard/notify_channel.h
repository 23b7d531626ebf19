// Hands the seccomp notify fd from the shim (inside the sandbox) to the
// launcher over a socketpair the launcher created: one message,
// "ccsandbox-notify-fd" plus the fd in SCM_RIGHTS. The shim closes its end
// before exec, so the command never holds it.
//
//   shim:      SendNotifyFd(channel, notify.get());  close both; exec
//   launcher:  absl::StatusOr<UniqueFd> notify = ReceiveNotifyFd(channel);  // when readable
#ifndef CCSANDBOX_LAUNCHER_CREATE_GUARD_NOTIFY_CHANNEL_H_
#define CCSANDBOX_LAUNCHER_CREATE_GUARD_NOTIFY_CHANNEL_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher {

// A socketpair suited to the channel (SOCK_SEQPACKET, close-on-exec): [0] stays
// with the launcher, [1] goes to the shim (clear its close-on-exec flag there,
// e.g. via inherit_fds).
absl::StatusOr<std::pair<UniqueFd, UniqueFd>> NotifyChannelPair();

absl::Status SendNotifyFd(int channel, int notify_fd);

// Blocks until the message arrives. UNAVAILABLE when the peer closed without
// sending one (the shim failed before installing the filter); INVALID_ARGUMENT
// for anything else.
absl::StatusOr<UniqueFd> ReceiveNotifyFd(int channel);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_CREATE_GUARD_NOTIFY_CHANNEL_H_
