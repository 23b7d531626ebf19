#include "launcher/shim/init_protocol.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace ccsandbox::launcher {
namespace {

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void PutString(std::string& out, std::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

uint32_t ReadU32At(std::string_view in, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(in[at + i])} << (8 * i);
  return v;
}

// Reads the payload front to back; every read checks what is left.
class Cursor {
 public:
  explicit Cursor(std::string_view in) : in_(in) {}
  bool U32(uint32_t& v) {
    if (in_.size() - at_ < 4) return false;
    v = ReadU32At(in_, at_);
    at_ += 4;
    return true;
  }
  bool U64(uint64_t& v) {
    uint32_t low, high;
    if (!U32(low) || !U32(high)) return false;
    v = (uint64_t{high} << 32) | low;
    return true;
  }
  bool String(std::string& s) {
    uint32_t n;
    if (!U32(n) || in_.size() - at_ < n) return false;
    s.assign(in_.substr(at_, n));
    at_ += n;
    return true;
  }
  bool Strings(std::vector<std::string>& list) {
    uint32_t n;
    if (!U32(n)) return false;
    // Each string needs at least its length: a count past the end is refused before any
    // allocation.
    if (n > (in_.size() - at_) / 4) return false;
    list.resize(n);
    for (std::string& s : list) {
      if (!String(s)) return false;
    }
    return true;
  }
  bool AtEnd() const { return at_ == in_.size(); }

 private:
  std::string_view in_;
  size_t at_ = 0;
};

bool KnownKind(uint32_t kind) {
  return kind >= static_cast<uint32_t>(InitKind::kExec) &&
         kind <= static_cast<uint32_t>(InitKind::kEnded);
}

}  // namespace

std::string EncodeInitFrame(const InitMessage& message, size_t fd_count) {
  std::string payload;
  PutU32(payload, static_cast<uint32_t>(message.kind));
  PutU64(payload, message.exec_id);
  PutU32(payload, static_cast<uint32_t>(message.value));
  PutU32(payload, static_cast<uint32_t>(fd_count));
  PutU32(payload, static_cast<uint32_t>(message.argv.size()));
  for (const std::string& arg : message.argv) PutString(payload, arg);
  PutU32(payload, static_cast<uint32_t>(message.env.size()));
  for (const std::string& var : message.env) PutString(payload, var);
  PutString(payload, message.workdir);
  std::string frame;
  PutU32(frame, static_cast<uint32_t>(payload.size()));
  return frame + payload;
}

absl::StatusOr<InitMessage> DecodeInitPayload(std::string_view payload, size_t& fd_count) {
  Cursor in(payload);
  InitMessage message;
  uint32_t kind, value, fds;
  if (!in.U32(kind) || !KnownKind(kind)) {
    return absl::InvalidArgumentError("init frame: unknown kind");
  }
  message.kind = static_cast<InitKind>(kind);
  if (!in.U64(message.exec_id) || !in.U32(value) || !in.U32(fds) || !in.Strings(message.argv) ||
      !in.Strings(message.env) || !in.String(message.workdir)) {
    return absl::InvalidArgumentError("init frame: truncated");
  }
  if (!in.AtEnd()) return absl::InvalidArgumentError("init frame: trailing bytes");
  if (fds > kMaxInitFrameFds) return absl::InvalidArgumentError("init frame: too many fds");
  message.value = static_cast<int32_t>(value);
  fd_count = fds;
  return message;
}

absl::Status SendInitMessage(int fd, const InitMessage& message, absl::Span<const int> fds,
                             int timeout_ms) {
  if (fds.size() > kMaxInitFrameFds) return absl::InvalidArgumentError("init frame: too many fds");
  const std::string frame = EncodeInitFrame(message, fds.size());
  if (frame.size() - 4 > kMaxInitFrameBytes) {
    return absl::InvalidArgumentError("init frame: argv and environment too large");
  }
  size_t sent = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  while (sent < frame.size()) {
    iovec iov{const_cast<char*>(frame.data() + sent), frame.size() - sent};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxInitFrameFds)] = {};
    if (sent == 0 && !fds.empty()) {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL | (timeout_ms >= 0 ? MSG_DONTWAIT : 0));
    if (n < 0 && errno == EAGAIN && timeout_ms >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd room{fd, POLLOUT, 0};
      if (left.count() <= 0 || poll(&room, 1, static_cast<int>(left.count())) == 0) {
        return absl::DeadlineExceededError("init channel: the peer takes nothing");
      }
      continue;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("init channel: ", strerror(errno)));
    }
    sent += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status InitFrameReader::ReadAvailable(int fd) {
  if (broken_) return absl::DataLossError("init channel: malformed stream");
  char chunk[65536];
  while (!closed_) {
    iovec iov{chunk, sizeof(chunk)};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 16)];
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      return absl::UnavailableError(absl::StrCat("init channel: ", strerror(errno)));
    }
    bool refused = (msg.msg_flags & MSG_CTRUNC) != 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int received;
        std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        UniqueFd owned(received);  // closed here unless this side takes descriptors
        if (accept_fds_) {
          fds_.push_back(std::move(owned));
        } else {
          refused = true;
        }
      }
    }
    if (refused) {
      broken_ = true;
      return absl::DataLossError("init channel: unexpected file descriptors");
    }
    if (n == 0) {
      closed_ = true;
      break;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
    if (buffer_.size() > kMaxInitFrameBytes + 4 + sizeof(chunk)) break;  // Next() decides
  }
  return absl::OkStatus();
}

std::optional<absl::StatusOr<InitFrame>> InitFrameReader::Next() {
  if (broken_) return absl::StatusOr<InitFrame>(absl::DataLossError("init channel: broken"));
  if (buffer_.size() < 4) {
    if (closed_) {
      return absl::StatusOr<InitFrame>(absl::UnavailableError("init channel: closed"));
    }
    return std::nullopt;
  }
  const uint32_t length = ReadU32At(buffer_, 0);
  auto fail = [this](absl::Status why) {
    broken_ = true;
    return std::optional<absl::StatusOr<InitFrame>>(std::move(why));
  };
  if (length > kMaxInitFrameBytes) {
    return fail(absl::DataLossError(absl::StrCat("init frame: ", length, " bytes is too large")));
  }
  if (buffer_.size() - 4 < length) {
    if (closed_) return fail(absl::UnavailableError("init channel: closed mid-frame"));
    return std::nullopt;
  }
  size_t fd_count = 0;
  absl::StatusOr<InitMessage> message =
      DecodeInitPayload(std::string_view(buffer_).substr(4, length), fd_count);
  buffer_.erase(0, 4 + length);
  if (!message.ok()) return fail(absl::DataLossError(message.status().message()));
  if (fd_count > fds_.size()) {
    return fail(absl::DataLossError("init frame: its file descriptors did not come with it"));
  }
  InitFrame frame;
  frame.message = *std::move(message);
  for (size_t i = 0; i < fd_count; ++i) {
    frame.fds.push_back(std::move(fds_.front()));
    fds_.pop_front();
  }
  return absl::StatusOr<InitFrame>(std::move(frame));
}

}  // namespace ccsandbox::launcher
