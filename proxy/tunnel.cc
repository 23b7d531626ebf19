#include "proxy/tunnel.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "absl/time/time.h"
#include "asio/post.hpp"

namespace ccsandbox::proxy {
namespace {

// A direction switches from copying to splicing after this many bytes: below it, creating and
// closing a pipe costs more system calls than the copies it saves.
constexpr uint64_t kSpliceAfterBytes = 256 * 1024;
// Bytes a bulk direction's pipe holds: fewer system calls per byte. Pipe pages are charged to
// the user; past the kernel's per-user budget a pipe keeps its smaller default size.
constexpr int kPipeBytes = 1 << 20;
constexpr size_t kSpliceChunk = 1 << 20;
constexpr size_t kCopyChunk = 64 * 1024;
// The send buffer of the client's socket once the download is bulk (the kernel doubles it). The
// client is on this host, so a small buffer costs no throughput, and it keeps the bytes in
// flight few: the reader then copies them while they are still in the CPU cache, and the
// proxy's own transmit path does less per byte. The upstream's sockets keep the kernel's
// autotuning: their window has to cover the path's bandwidth-delay product.
constexpr int kClientSendBuffer = 128 * 1024;
// Bytes one direction moves per handler before it yields the loop to the other sessions.
constexpr uint64_t kBurstBytes = 1 << 20;

// The copy path's buffer: one per loop thread, never holding bytes across handlers.
char* CopyBuffer() {
  static thread_local std::unique_ptr<char[]> buffer(new char[kCopyChunk]);
  return buffer.get();
}

bool WouldBlock() { return errno == EAGAIN || errno == EWOULDBLOCK; }

}  // namespace

Tunnel::Tunnel(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
               asio::ip::tcp::socket upstream, std::string to_client, std::string to_upstream)
    : SessionChild(state),
      client_(std::move(client)),
      upstream_(std::move(upstream)),
      timer_(state->context()) {
  up_.from = &client_;
  up_.to = &upstream_;
  up_.pending = std::move(to_upstream);
  down_.from = &upstream_;
  down_.to = &client_;
  down_.pending = std::move(to_client);
}

Tunnel::~Tunnel() {
  ClosePipe(up_);
  ClosePipe(down_);
}

void Tunnel::Start(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                   asio::ip::tcp::socket upstream, std::string to_client, std::string to_upstream) {
  auto tunnel = std::make_shared<Tunnel>(state, std::move(client), std::move(upstream),
                                         std::move(to_client), std::move(to_upstream));
  state->Register(tunnel);
  tunnel->Begin();
}

std::shared_ptr<Tunnel> Tunnel::self() {
  return std::static_pointer_cast<Tunnel>(shared_from_this());
}

void Tunnel::Begin() {
  if (closed_) return;
  // splice(2) needs O_NONBLOCK on the sockets themselves; Asio has usually set it already.
  std::error_code ec;
  if (!client_.native_non_blocking()) client_.native_non_blocking(true, ec);
  if (!ec && !upstream_.native_non_blocking()) upstream_.native_non_blocking(true, ec);
  if (ec) {
    Shutdown(/*reset=*/true);
    return;
  }
  last_activity_ = std::chrono::steady_clock::now();
  ArmTimer();
  Pump(up_);
  Pump(down_);
}

bool Tunnel::OpenPipe(Direction& d) {
  int fds[2];
  if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return false;
  d.pipe_read = fds[0];
  d.pipe_write = fds[1];
  // Best effort: past the per-user pipe budget the kernel keeps the smaller size.
  fcntl(d.pipe_write, F_SETPIPE_SZ, kPipeBytes);
  if (d.to == &client_) {
    // Best effort too: the relay is correct with any buffer size.
    setsockopt(d.to->native_handle(), SOL_SOCKET, SO_SNDBUF, &kClientSendBuffer,
               sizeof(kClientSendBuffer));
  }
  return true;
}

void Tunnel::ClosePipe(Direction& d) {
  if (d.pipe_read >= 0) close(d.pipe_read);
  if (d.pipe_write >= 0) close(d.pipe_write);
  d.pipe_read = d.pipe_write = -1;
  d.in_pipe = 0;
}

void Tunnel::Wait(Direction& d, asio::socket_base::wait_type type) {
  asio::ip::tcp::socket& socket = type == asio::socket_base::wait_read ? *d.from : *d.to;
  socket.async_wait(type, [self = self(), &d, type](const std::error_code& ec) {
    if (ec || self->closed_) return;
    if (type == asio::socket_base::wait_read) d.readable = true;
    self->Pump(d);
  });
}

void Tunnel::Yield(Direction& d) {
  asio::post(state().context(), [self = self(), &d] {
    if (!self->closed_) self->Pump(d);
  });
}

void Tunnel::Pump(Direction& d) {
  if (closed_ || d.done) return;
  const int from = d.from->native_handle();
  const int to = d.to->native_handle();
  const uint64_t moved_before = d.moved;
  bool progress = false;
  while (true) {
    // 1. Bytes already in user memory: the initial bytes, or what a copy could not send.
    if (d.pending_sent < d.pending.size()) {
      const ssize_t n = ::send(to, d.pending.data() + d.pending_sent,
                               d.pending.size() - d.pending_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        d.pending_sent += static_cast<size_t>(n);
        progress = true;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && WouldBlock()) {
        Wait(d, asio::socket_base::wait_write);
        break;
      }
      Shutdown(/*reset=*/true);
      return;
    }
    if (!d.pending.empty()) {
      std::string().swap(d.pending);
      d.pending_sent = 0;
    }
    // 2. Bytes in the pipe.
    if (d.in_pipe > 0) {
      const ssize_t n =
          splice(d.pipe_read, nullptr, to, nullptr, d.in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) {
        d.in_pipe -= static_cast<size_t>(n);
        progress = true;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && WouldBlock()) {
        Wait(d, asio::socket_base::wait_write);
        break;
      }
      Shutdown(/*reset=*/true);
      return;
    }
    if (d.eof) {
      ::shutdown(to, SHUT_WR);
      d.done = true;
      ClosePipe(d);
      if (up_.done && down_.done) {
        Shutdown(/*reset=*/false);
        return;
      }
      last_activity_ = std::chrono::steady_clock::now();
      ArmTimer();  // the half-open timeout from now on
      return;
    }
    // 3. New bytes: spliced through the pipe once the direction is bulk, copied before.
    if (!d.readable) {
      Wait(d, asio::socket_base::wait_read);
      break;
    }
    // A busy tunnel must not starve the loop's other sessions: after a burst it queues behind
    // them.
    if (d.moved - moved_before >= kBurstBytes) {
      Yield(d);
      break;
    }
    ssize_t n;
    size_t asked;
    if (d.moved >= kSpliceAfterBytes) {
      if (d.pipe_read < 0 && !OpenPipe(d)) {
        Shutdown(/*reset=*/true);
        return;
      }
      asked = 0;  // bulk: more has usually arrived by the time the pipe is flushed; read again
      n = splice(from, nullptr, d.pipe_write, nullptr, kSpliceChunk,
                 SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) d.in_pipe += static_cast<size_t>(n);
    } else {
      char* buffer = CopyBuffer();
      asked = kCopyChunk;
      n = ::recv(from, buffer, kCopyChunk, MSG_DONTWAIT);
      if (n > 0) {
        const ssize_t sent =
            ::send(to, buffer, static_cast<size_t>(n), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent < 0 && errno != EINTR && !WouldBlock()) {
          Shutdown(/*reset=*/true);
          return;
        }
        const size_t done = sent > 0 ? static_cast<size_t>(sent) : 0;
        if (done < static_cast<size_t>(n)) d.pending.assign(buffer + done, n - done);
      }
    }
    if (n > 0) {
      d.moved += static_cast<uint64_t>(n);
      d.readable = static_cast<size_t>(n) >= asked;  // short: the socket is most likely drained
      progress = true;
      continue;
    }
    if (n == 0) {
      d.eof = true;
      continue;
    }
    if (errno == EINTR) continue;
    if (WouldBlock()) {
      d.readable = false;
      continue;
    }
    Shutdown(/*reset=*/true);
    return;
  }
  if (progress) last_activity_ = std::chrono::steady_clock::now();
}

void Tunnel::ArmTimer() {
  const auto& timeouts = state().options().timeouts;
  const absl::Duration timeout = (up_.done || down_.done) ? timeouts.half_open : timeouts.idle;
  timer_.expires_at(last_activity_ + absl::ToChronoNanoseconds(timeout));
  timer_.async_wait([self = self()](const std::error_code& ec) {
    if (ec || self->closed_) return;
    self->OnTimer();
  });
}

void Tunnel::OnTimer() {
  const auto& timeouts = state().options().timeouts;
  const absl::Duration timeout = (up_.done || down_.done) ? timeouts.half_open : timeouts.idle;
  if (std::chrono::steady_clock::now() >= last_activity_ + absl::ToChronoNanoseconds(timeout)) {
    Shutdown(/*reset=*/true);
    return;
  }
  ArmTimer();
}

void Tunnel::Shutdown(bool reset) {
  if (closed_) return;
  closed_ = true;
  std::error_code ignored;
  timer_.cancel();
  for (asio::ip::tcp::socket* socket : {&client_, &upstream_}) {
    // A reset tells each peer the stream was cut, not finished.
    if (reset) socket->set_option(asio::socket_base::linger(true, 0), ignored);
    socket->close(ignored);
  }
  ClosePipe(up_);
  ClosePipe(down_);
}

void Tunnel::Close() { Shutdown(/*reset=*/true); }

}  // namespace ccsandbox::proxy
