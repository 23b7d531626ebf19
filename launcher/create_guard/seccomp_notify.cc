#include "launcher/create_guard/seccomp_notify.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ccsandbox::launcher {
namespace {

absl::Status IoctlError(absl::string_view what) {
  if (errno == ENOENT) {
    return absl::NotFoundError(absl::StrCat("seccomp notify: ", what, ": the caller is gone"));
  }
  return absl::InternalError(absl::StrCat("seccomp notify: ", what, ": ", strerror(errno)));
}

int Ioctl(int fd, unsigned long request, void* arg) {
  int rc;
  do {
    rc = ioctl(fd, request, arg);
  } while (rc < 0 && errno == EINTR);
  return rc;
}

}  // namespace

absl::StatusOr<SeccompNotify> SeccompNotify::Create(UniqueFd fd) {
  char link[64] = {};
  const std::string self = absl::StrCat("/proc/self/fd/", fd.get());
  if (readlink(self.c_str(), link, sizeof(link) - 1) < 0 ||
      std::string(link) != "anon_inode:seccomp notify") {
    return absl::InvalidArgumentError("seccomp notify: the fd is not a seccomp listener");
  }
  seccomp_notif_sizes sizes{};
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) {
    return absl::InternalError(
        absl::StrCat("seccomp notify: SECCOMP_GET_NOTIF_SIZES: ", strerror(errno)));
  }
  return SeccompNotify(std::move(fd), std::max<size_t>(sizes.seccomp_notif, sizeof(seccomp_notif)),
                       std::max<size_t>(sizes.seccomp_notif_resp, sizeof(seccomp_notif_resp)));
}

absl::StatusOr<seccomp_notif> SeccompNotify::Receive() {
  // Zeroed every time: the kernel refuses a receive buffer that is not all
  // zeroes.
  std::vector<char> buf(notif_size_, 0);
  if (Ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_RECV, buf.data()) != 0) {
    return IoctlError("receive");
  }
  seccomp_notif notif;
  memcpy(&notif, buf.data(), sizeof(notif));
  return notif;
}

absl::Status SeccompNotify::IdValid(uint64_t id) {
  if (Ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) return IoctlError("id valid");
  return absl::OkStatus();
}

absl::Status SeccompNotify::Respond(uint64_t id, int64_t value, int error, uint32_t flags) {
  std::vector<char> buf(resp_size_, 0);
  seccomp_notif_resp resp{};
  resp.id = id;
  resp.val = value;
  resp.error = error;
  resp.flags = flags;
  memcpy(buf.data(), &resp, sizeof(resp));
  if (Ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_SEND, buf.data()) != 0) return IoctlError("send");
  return absl::OkStatus();
}

absl::Status SeccompNotify::RespondErrno(uint64_t id, int error) {
  return Respond(id, 0, -error, 0);
}

absl::Status SeccompNotify::RespondValue(uint64_t id, int64_t value) {
  return Respond(id, value, 0, 0);
}

absl::Status SeccompNotify::RespondContinue(uint64_t id) {
  return Respond(id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

absl::Status SeccompNotify::RespondFd(uint64_t id, UniqueFd fd, bool close_on_exec) {
  seccomp_notif_addfd addfd{};
  addfd.id = id;
  addfd.flags = 0;  // not ADDFD_FLAG_SEND: our copy must be closed before the caller resumes
  addfd.srcfd = static_cast<uint32_t>(fd.get());
  addfd.newfd_flags = close_on_exec ? O_CLOEXEC : 0;
  const int installed = Ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
  const int error = errno;
  fd.Reset();
  if (installed < 0) {
    if (error == ENOENT) {
      errno = error;
      return IoctlError("add fd");
    }
    // EMFILE and the like: the call fails with that errno instead (the file now exists).
    return RespondErrno(id, error);
  }
  return RespondValue(id, installed);
}

}  // namespace ccsandbox::launcher
