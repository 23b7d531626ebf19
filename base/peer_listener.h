// The launcher's Unix socket: binds it (mode 0660), accepts connections and reports each
// with the peer's kernel-verified credentials (SO_PEERCRED), never what the peer claims.
// The socket file is removed when the listener goes away.
#ifndef CCSANDBOX_BASE_PEER_LISTENER_H_
#define CCSANDBOX_BASE_PEER_LISTENER_H_

#include <sys/socket.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "base/unique_fd.h"

namespace ccsandbox {

class PeerListener {
 public:
  // Refuses to replace anything but a stale socket nobody listens on.
  static absl::StatusOr<std::unique_ptr<PeerListener>> Bind(const std::string& path);
  ~PeerListener();

  // Accepts until Stop(); each connection goes to `on_accept` with its credentials.
  void Serve(const std::function<void(UniqueFd, const ucred&)>& on_accept);
  // Thread-safe; makes Serve return.
  void Stop();

 private:
  PeerListener() = default;
  std::string path_;
  UniqueFd listen_fd_;
  UniqueFd stop_fd_;
};

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_PEER_LISTENER_H_
