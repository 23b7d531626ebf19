// Defence in depth for both daemons' sockets: a caller that lives inside a sandbox is refused
// however it reached the socket (a bind that should not have been allowed, an fd passed out,
// a path we did not think of). Every native sandbox has its own pid namespace, so a peer
// whose pid lies in a pid namespace nested below ours (its NSpid line has more than one
// entry), or whose pid we cannot see at all (SO_PEERCRED reports 0 for a pid namespace that
// is not ours or below), is refused. /proc/PID/status is world-readable, so the check needs
// no privilege over the peer. A consequence: clients in containers with their own pid
// namespace cannot call the daemons directly.
#ifndef CCSANDBOX_BASE_PEER_CHECK_H_
#define CCSANDBOX_BASE_PEER_CHECK_H_

#include <sys/socket.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ccsandbox {

// PERMISSION_DENIED, saying why, when `peer` is or may be inside a sandbox.
absl::Status CheckPeerOutsideSandboxes(const ucred& peer);

// True when a /proc/PID/status text shows a pid namespace nested below the reader's, or
// shows no NSpid line at all (fail closed).
bool StatusShowsNestedPidNamespace(absl::string_view status);

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_PEER_CHECK_H_
