#include "launcher/create_guard/notify_channel.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::launcher {
namespace {

constexpr absl::string_view kMagic = "ccsandbox-notify-fd";

}  // namespace

absl::StatusOr<std::pair<UniqueFd, UniqueFd>> NotifyChannelPair() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return absl::InternalError(absl::StrCat("notify channel: socketpair: ", strerror(errno)));
  }
  return std::make_pair(UniqueFd(fds[0]), UniqueFd(fds[1]));
}

absl::Status SendNotifyFd(int channel, int notify_fd) {
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{const_cast<char*>(kMagic.data()), kMagic.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &notify_fd, sizeof(int));
  ssize_t n;
  do {
    n = sendmsg(channel, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(kMagic.size())) {
    return absl::InternalError(absl::StrCat("notify channel: sendmsg: ", strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<UniqueFd> ReceiveNotifyFd(int channel) {
  char data[64];
  // Room for a few fds: any extra ones a confused peer sent are closed, never
  // leaked.
  char control[CMSG_SPACE(4 * sizeof(int))] = {};
  iovec iov{data, sizeof(data)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = recvmsg(channel, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    return absl::InternalError(absl::StrCat("notify channel: recvmsg: ", strerror(errno)));
  }
  std::vector<UniqueFd> received;
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg != nullptr; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
      received.emplace_back(fd);
    }
  }
  if (n == 0 && received.empty()) {
    return absl::UnavailableError(
        "notify channel: the shim closed the channel without sending the "
        "seccomp notify fd "
        "(it failed before installing the create filter; see its stderr)");
  }
  if (absl::string_view(data, n) != kMagic || received.size() != 1 ||
      (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
    return absl::InvalidArgumentError("notify channel: unexpected message from the shim");
  }
  return std::move(received[0]);
}

}  // namespace ccsandbox::launcher
