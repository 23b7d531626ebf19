#include "base/peer_listener.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox {
namespace {

absl::StatusOr<sockaddr_un> Address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket: '", path, "' must be 1..", sizeof(addr.sun_path) - 1, " bytes long"));
  }
  memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// True when something answers on `path`.
bool SomeoneListens(const sockaddr_un& addr) {
  UniqueFd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  return probe.valid() &&
         connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PeerListener>> PeerListener::Bind(const std::string& path) {
  absl::StatusOr<sockaddr_un> addr = Address(path);
  if (!addr.ok()) return addr.status();
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("socket: '", path, "' exists and is not a socket; not replacing it"));
    }
    if (SomeoneListens(*addr)) {
      return absl::FailedPreconditionError(
          absl::StrCat("socket: another process already listens on '", path, "'"));
    }
    unlink(path.c_str());
  }
  auto listener = std::unique_ptr<PeerListener>(new PeerListener());
  listener->listen_fd_.Reset(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listener->listen_fd_.valid()) return absl::InternalError("socket() failed");
  // Created 0660 from the start: no window in which others may connect.
  const mode_t old_mask = umask(0117);
  const int bound =
      bind(listener->listen_fd_.get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr));
  const int bind_errno = errno;
  umask(old_mask);
  if (bound != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("socket: cannot bind '", path, "': ", strerror(bind_errno)));
  }
  listener->path_ = path;
  if (chmod(path.c_str(), 0660) != 0 || listen(listener->listen_fd_.get(), 128) != 0) {
    return absl::InternalError(absl::StrCat("socket: cannot listen on '", path, "'"));
  }
  listener->stop_fd_.Reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!listener->stop_fd_.valid()) return absl::InternalError("eventfd failed");
  return listener;
}

PeerListener::~PeerListener() {
  if (!path_.empty()) unlink(path_.c_str());
}

void PeerListener::Serve(const std::function<void(UniqueFd, const ucred&)>& on_accept) {
  for (;;) {
    pollfd fds[2] = {{listen_fd_.get(), POLLIN, 0}, {stop_fd_.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    UniqueFd conn(accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!conn.valid()) {
      // Out of descriptors: the connection stays queued; wait a little instead of spinning.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        pollfd stop = {stop_fd_.get(), POLLIN, 0};
        poll(&stop, 1, 50);
      }
      continue;
    }
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) continue;
    on_accept(std::move(conn), cred);
  }
}

void PeerListener::Stop() {
  const uint64_t one = 1;
  (void)!write(stop_fd_.get(), &one, sizeof(one));
}

}  // namespace ccsandbox
