#include "base/socket_relay.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "asio/post.hpp"

namespace ccsandbox {
namespace {

// A direction splices once it has moved this many bytes; below it, a pipe's creation and closing
// cost more system calls than the copies they save.
constexpr uint64_t kSpliceAfterBytes = 256 * 1024;
constexpr size_t kCopyChunk = 64 * 1024;
// Bytes one direction moves per handler before it queues behind the loop's other work.
constexpr uint64_t kBurstBytes = 1 << 20;

// The copy phase's buffer: one per loop thread, holding no bytes between handlers, so an idle
// relay owns no buffer.
char* CopyBuffer() {
  static thread_local std::unique_ptr<char[]> buffer(new char[kCopyChunk]);
  return buffer.get();
}

// Blocked on the loop's thread, SIGPIPE from a splice into a closed socket leaves the call
// failing with EPIPE and stays pending there until DiscardSigpipe() takes it. The process's
// disposition is left alone (a sandboxed command inherits it).
void BlockSigpipeOnThisThread() {
  static thread_local const bool blocked = [] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    return pthread_sigmask(SIG_BLOCK, &set, nullptr) == 0;
  }();
  (void)blocked;
}

void DiscardSigpipe() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  const timespec now = {0, 0};
  while (sigtimedwait(&set, nullptr, &now) == SIGPIPE) {
  }
}

bool WouldBlock() { return errno == EAGAIN || errno == EWOULDBLOCK; }

}  // namespace

SocketRelay::SocketRelay(Socket local, Socket remote, SocketRelayOptions options)
    : options_(options),
      local_(std::move(local)),
      remote_(std::move(remote)),
      timer_(local_.get_executor()) {
  to_remote_.from = &local_;
  to_remote_.to = &remote_;
  to_local_.from = &remote_;
  to_local_.to = &local_;
}

SocketRelay::~SocketRelay() = default;

void SocketRelay::Start(const std::shared_ptr<void>& owner, std::string to_local,
                        std::string to_remote) {
  if (closed_) return;
  owner_ = owner;
  to_local_.pending = std::move(to_local);
  to_remote_.pending = std::move(to_remote);
  // splice(2) needs O_NONBLOCK on the sockets themselves; Asio has usually set it already.
  asio::error_code error;
  if (!local_.native_non_blocking()) local_.native_non_blocking(true, error);
  if (!error && !remote_.native_non_blocking()) remote_.native_non_blocking(true, error);
  if (error) {
    Shutdown(/*reset=*/true);
    return;
  }
  if (timed()) {
    last_activity_ = std::chrono::steady_clock::now();
    ArmTimer();
  }
  Pump(to_remote_);
  Pump(to_local_);
}

void SocketRelay::Close() { Shutdown(/*reset=*/true); }

// Moves what `d` can move now, then leaves exactly one wait (or a yield) outstanding for it, or
// ends it.
void SocketRelay::Pump(Direction& d) {
  if (closed_ || d.done) return;
  const uint64_t moved_before = d.moved;
  const uint64_t sent_before = d.sent;
  const Next next = Move(d);
  if (timed() && (d.moved != moved_before || d.sent != sent_before)) {
    last_activity_ = std::chrono::steady_clock::now();
  }
  switch (next) {
    case Next::kWaitRead:
      Wait(d, asio::socket_base::wait_read);
      return;
    case Next::kWaitWrite:
      Wait(d, asio::socket_base::wait_write);
      return;
    case Next::kYield:
      Yield(d);
      return;
    case Next::kForwardEof:
      ForwardEof(d);
      return;
    case Next::kFail:
      Shutdown(/*reset=*/true);
      return;
  }
}

SocketRelay::Next SocketRelay::Move(Direction& d) {
  const uint64_t moved_before = d.moved;
  while (true) {
    switch (FlushHeld(d)) {
      case Flush::kEmpty:
        break;
      case Flush::kBlocked:
        return Next::kWaitWrite;
      case Flush::kFailed:
        return Next::kFail;
    }
    if (d.eof) return Next::kForwardEof;
    if (!d.readable) return Next::kWaitRead;
    // A busy direction must not starve the loop's other work.
    if (d.moved - moved_before >= kBurstBytes) return Next::kYield;
    if (!d.bulk && d.moved >= kSpliceAfterBytes) GoBulk(d);
    if (!(d.pipe_read.valid() ? SpliceSome(d) : CopySome(d))) return Next::kFail;
  }
}

// Sends the bytes `d` already holds: in user memory, then in its pipe.
SocketRelay::Flush SocketRelay::FlushHeld(Direction& d) {
  const int to = d.to->native_handle();
  while (d.pending_sent < d.pending.size()) {
    const ssize_t n = ::send(to, d.pending.data() + d.pending_sent,
                             d.pending.size() - d.pending_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      d.pending_sent += static_cast<size_t>(n);
      d.sent += static_cast<uint64_t>(n);
    } else if (errno != EINTR) {
      return WouldBlock() ? Flush::kBlocked : Flush::kFailed;
    }
  }
  if (!d.pending.empty()) {
    std::string().swap(d.pending);
    d.pending_sent = 0;
  }
  while (d.in_pipe > 0) {
    const ssize_t n = splice(d.pipe_read.get(), nullptr, to, nullptr, d.in_pipe,
                             SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) {
      d.in_pipe -= static_cast<size_t>(n);
      d.sent += static_cast<uint64_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && WouldBlock()) {
      return Flush::kBlocked;
    } else {
      if (n < 0 && errno == EPIPE) DiscardSigpipe();
      return Flush::kFailed;
    }
  }
  return Flush::kEmpty;
}

// One read through the loop's buffer and its send; what the receiver cannot take yet goes to
// `pending`. False on an error.
bool SocketRelay::CopySome(Direction& d) {
  char* buffer = CopyBuffer();
  const ssize_t n = ::recv(d.from->native_handle(), buffer, kCopyChunk, MSG_DONTWAIT);
  if (n < 0) return ReadFailed(d);
  if (n == 0) {
    d.eof = true;
    return true;
  }
  d.moved += static_cast<uint64_t>(n);
  d.readable = static_cast<size_t>(n) == kCopyChunk;  // short: most likely drained
  const ssize_t sent =
      ::send(d.to->native_handle(), buffer, static_cast<size_t>(n), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (sent < 0 && errno != EINTR && !WouldBlock()) return false;
  const size_t done = sent > 0 ? static_cast<size_t>(sent) : 0;
  d.sent += done;
  if (done < static_cast<size_t>(n)) d.pending.assign(buffer + done, n - done);
  return true;
}

// One splice from `from` into the direction's pipe (flushed by the next FlushHeld). False on an
// error.
bool SocketRelay::SpliceSome(Direction& d) {
  const ssize_t n =
      splice(d.from->native_handle(), nullptr, d.pipe_write.get(), nullptr,
             static_cast<size_t>(options_.pipe_bytes), SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
  if (n < 0) return ReadFailed(d);
  if (n == 0) {
    d.eof = true;
    return true;
  }
  // Bulk: more has usually arrived by the time the pipe is flushed; the next read finds out.
  d.moved += static_cast<uint64_t>(n);
  d.in_pipe += static_cast<size_t>(n);
  return true;
}

bool SocketRelay::ReadFailed(Direction& d) {
  if (errno == EINTR) return true;
  if (WouldBlock()) {
    d.readable = false;
    return true;
  }
  return false;
}

// Gives `d` its pipe. Without one worth splicing through (none left, or too small), `d` keeps
// copying: the relay works either way.
void SocketRelay::GoBulk(Direction& d) {
  d.bulk = true;
  if (d.to == &local_) {
    // Best effort: the relay is correct with any buffer size.
    setsockopt(local_.native_handle(), SOL_SOCKET, SO_SNDBUF, &options_.local_send_buffer,
               sizeof(options_.local_send_buffer));
  }
  BlockSigpipeOnThisThread();
  int fds[2];
  if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return;
  d.pipe_read.Reset(fds[0]);
  d.pipe_write.Reset(fds[1]);
  int size = fcntl(d.pipe_write.get(), F_SETPIPE_SZ, options_.pipe_bytes);
  if (size < 0) size = fcntl(d.pipe_write.get(), F_GETPIPE_SZ);
  if (size < options_.min_pipe_bytes) {
    ClosePipe(d);
    return;
  }
  d.spliced = true;
}

void SocketRelay::ClosePipe(Direction& d) {
  d.pipe_read.Reset();
  d.pipe_write.Reset();
  d.in_pipe = 0;
}

void SocketRelay::ForwardEof(Direction& d) {
  asio::error_code ignored;
  d.to->shutdown(asio::socket_base::shutdown_send, ignored);
  d.done = true;
  ClosePipe(d);
  if (to_remote_.done && to_local_.done) {
    Shutdown(/*reset=*/false);
    return;
  }
  if (timed()) {
    last_activity_ = std::chrono::steady_clock::now();
    ArmTimer();  // the half-open timeout from now on
  }
}

void SocketRelay::Wait(Direction& d, asio::socket_base::wait_type type) {
  Socket& socket = type == asio::socket_base::wait_read ? *d.from : *d.to;
  socket.async_wait(type, [this, owner = owner_.lock(), &d, type](const asio::error_code& error) {
    if (error || closed_) return;
    if (type == asio::socket_base::wait_read) d.readable = true;
    Pump(d);
  });
}

void SocketRelay::Yield(Direction& d) {
  asio::post(local_.get_executor(), [this, owner = owner_.lock(), &d] {
    if (!closed_) Pump(d);
  });
}

bool SocketRelay::timed() const {
  return options_.idle.count() > 0 || options_.half_open.count() > 0;
}

std::chrono::nanoseconds SocketRelay::Timeout() const {
  return (to_remote_.done || to_local_.done) ? options_.half_open : options_.idle;
}

void SocketRelay::ArmTimer() {
  if (Timeout().count() <= 0) {
    timer_.cancel();
    return;
  }
  timer_.expires_at(last_activity_ + Timeout());
  timer_.async_wait([this, owner = owner_.lock()](const asio::error_code& error) {
    if (error || closed_) return;
    OnTimer();
  });
}

void SocketRelay::OnTimer() {
  if (std::chrono::steady_clock::now() >= last_activity_ + Timeout()) {
    Shutdown(/*reset=*/true);
    return;
  }
  ArmTimer();
}

void SocketRelay::Shutdown(bool reset) {
  if (closed_) return;
  closed_ = true;
  timer_.cancel();
  asio::error_code ignored;
  for (Socket* socket : {&local_, &remote_}) {
    // A reset tells each peer the stream was cut, not finished.
    if (reset) socket->set_option(asio::socket_base::linger(true, 0), ignored);
    socket->close(ignored);
  }
  ClosePipe(to_remote_);
  ClosePipe(to_local_);
}

}  // namespace ccsandbox
