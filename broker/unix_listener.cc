#include "broker/unix_listener.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "absl/strings/str_cat.h"

namespace ccsandbox::broker {

absl::StatusOr<UniqueFd> UnixListener(const std::string& path) {
  sockaddr_un address{};
  if (path.size() >= sizeof(address.sun_path)) {
    return absl::InternalError(absl::StrCat("socket path too long: ", path));
  }
  address.sun_family = AF_UNIX;
  memcpy(address.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return absl::InternalError(absl::StrCat("bind ", path, ": ", strerror(errno)));
  }
  return fd;
}

}  // namespace ccsandbox::broker
