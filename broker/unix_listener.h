// A Unix stream socket bound at a path, for the per-session endpoints the launcher binds into
// a sandbox (the proxies' and the push gateway's sockets).
#ifndef CCSANDBOX_BROKER_UNIX_LISTENER_H_
#define CCSANDBOX_BROKER_UNIX_LISTENER_H_

#include <string>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace ccsandbox::broker {

// Bound at `path`, not yet listening (its mode comes from the 0700 directory it is in).
absl::StatusOr<UniqueFd> UnixListener(const std::string& path);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_UNIX_LISTENER_H_
