#include "launcher/shim/net_bridge.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"

namespace ccsandbox::launcher {
namespace {

// Both ends of a relay as one type: the TCP connection and the Unix socket.
using Socket = asio::generic::stream_protocol::socket;

// A direction splices once it has moved this many bytes; below it, a pipe's
// creation and closing cost more system calls than the copies they save.
constexpr uint64_t kSpliceAfterBytes = 256 * 1024;
// A bulk direction's pipe: fewer system calls per byte. Its pages count
// against the user's pipe budget (fs.pipe-user-pages-soft, 64 MiB shared by all
// of the user's processes, the sandboxed command's own pipes included) for as
// long as the connection lasts; 256 KiB moved bulk as fast as 1 MiB in
// egress_bench (the proxy's Unix socket rarely holds more). Past that budget
// the kernel gives an unprivileged process 8 KiB pipes that cannot grow:
// splicing through those costs far more than copying, so a direction whose pipe
// stays under kMinPipeBytes copies instead.
constexpr int kPipeBytes = 256 * 1024;
constexpr int kMinPipeBytes = 64 * 1024;
constexpr size_t kCopyChunk = 64 * 1024;
// The TCP socket's send buffer once a download is bulk (the kernel doubles
// it). The client is on this host, so a smaller buffer than autotuning's costs
// no throughput and keeps fewer bytes in flight: the client copies them while
// they are still in the CPU cache (egress_bench: less CPU in the bridge and in
// the client).
constexpr int kBulkSendBuffer = 256 * 1024;
// Bytes one direction moves per handler before it queues behind the loop's
// other connections.
constexpr uint64_t kBurstBytes = 1 << 20;

// The copy phase's buffer: one per loop thread, holding no bytes between
// handlers, so an idle connection owns no buffer.
char* CopyBuffer() {
  static thread_local std::unique_ptr<char[]> buffer(new char[kCopyChunk]);
  return buffer.get();
}

// splice(2) into a socket whose peer is gone raises SIGPIPE (it has no
// MSG_NOSIGNAL). Blocked on the loop's thread, the call fails with EPIPE
// instead and the signal stays pending there until DiscardSigpipe() takes it.
// The process's disposition is left alone: the command inherits it.
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

// One relayed connection: two directions (tcp -> unix, unix -> tcp), each
// pumped until EOF, which becomes shutdown(SHUT_WR) on the other side. The
// connection ends when both directions have ended, or on the first error: both
// sides are then closed (the TCP client gets a reset, so a cut transfer never
// looks complete).
class Relay : public std::enable_shared_from_this<Relay> {
 public:
  explicit Relay(asio::io_context& io) : io_(io), tcp_(io), unix_(io) {
    up_.from = &tcp_;
    up_.to = &unix_;
    down_.from = &unix_;
    down_.to = &tcp_;
  }
  ~Relay() {
    ClosePipe(up_);
    ClosePipe(down_);
  }

  Socket& tcp() { return tcp_; }

  void Connect(const std::string& unix_path) {
    asio::error_code ignored;
    tcp_.set_option(asio::ip::tcp::no_delay(true), ignored);
    unix_.async_connect(
        asio::local::stream_protocol::endpoint(unix_path),
        [self = shared_from_this()](const asio::error_code& error) {
          // On failure the client sees its connection close.
          if (error) return;
          self->Start();
        });
  }

 private:
  struct Direction {
    Socket* from = nullptr;
    Socket* to = nullptr;
    // Bytes a short send left behind when copying; freed once sent.
    std::string pending;
    size_t pending_sent = 0;
    int pipe_read = -1;
    int pipe_write = -1;
    size_t in_pipe = 0;
    uint64_t moved = 0;
    bool bulk = false;  // past kSpliceAfterBytes: spliced if it got a pipe
    // False after a short read: the next read waits for readiness first
    // instead of making a call that would only return EAGAIN.
    bool readable = false;
    bool eof = false;   // `from` sent FIN
    bool done = false;  // and it was forwarded to `to`
  };
  enum class Flush { kEmpty, kBlocked, kFailed };

  void Start() {
    // splice(2) needs O_NONBLOCK on the sockets themselves.
    asio::error_code error;
    if (!tcp_.native_non_blocking()) tcp_.native_non_blocking(true, error);
    if (!error && !unix_.native_non_blocking()) {
      unix_.native_non_blocking(true, error);
    }
    if (error) {
      Close(/*reset=*/true);
      return;
    }
    Pump(up_);
    Pump(down_);
  }

  // Moves what `d` can move now, then leaves exactly one wait (or a yield)
  // outstanding for it, or ends it.
  void Pump(Direction& d) {
    const uint64_t moved_before = d.moved;
    while (!closed_ && !d.done) {
      switch (FlushHeld(d)) {
        case Flush::kEmpty:
          break;
        case Flush::kBlocked:
          Wait(d, asio::socket_base::wait_write);
          return;
        case Flush::kFailed:
          Close(/*reset=*/true);
          return;
      }
      if (d.eof) {
        ForwardEof(d);
        return;
      }
      if (!d.readable) {
        Wait(d, asio::socket_base::wait_read);
        return;
      }
      // A bulk connection must not starve the others on the loop.
      if (d.moved - moved_before >= kBurstBytes) {
        Yield(d);
        return;
      }
      if (!d.bulk && d.moved >= kSpliceAfterBytes) GoBulk(d);
      if (!(d.pipe_read >= 0 ? SpliceSome(d) : CopySome(d))) {
        Close(/*reset=*/true);
        return;
      }
    }
  }

  // Sends the bytes `d` already holds: in user memory, then in its pipe.
  Flush FlushHeld(Direction& d) {
    const int to = d.to->native_handle();
    while (d.pending_sent < d.pending.size()) {
      const ssize_t n = ::send(to, d.pending.data() + d.pending_sent,
                               d.pending.size() - d.pending_sent,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) {
        d.pending_sent += static_cast<size_t>(n);
      } else if (errno != EINTR) {
        return WouldBlock() ? Flush::kBlocked : Flush::kFailed;
      }
    }
    if (!d.pending.empty()) {
      std::string().swap(d.pending);
      d.pending_sent = 0;
    }
    while (d.in_pipe > 0) {
      const ssize_t n = splice(d.pipe_read, nullptr, to, nullptr, d.in_pipe,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) {
        d.in_pipe -= static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && WouldBlock()) {
        return Flush::kBlocked;
      } else {
        if (errno == EPIPE) DiscardSigpipe();
        return Flush::kFailed;
      }
    }
    return Flush::kEmpty;
  }

  // One read through the loop's buffer and its send; what the receiver cannot
  // take yet goes to `pending`. False on an error.
  bool CopySome(Direction& d) {
    char* buffer = CopyBuffer();
    const ssize_t n =
        ::recv(d.from->native_handle(), buffer, kCopyChunk, MSG_DONTWAIT);
    if (n < 0) return ReadFailed(d);
    if (n == 0) {
      d.eof = true;
      return true;
    }
    d.moved += static_cast<uint64_t>(n);
    d.readable = static_cast<size_t>(n) == kCopyChunk;
    const ssize_t sent =
        ::send(d.to->native_handle(), buffer, static_cast<size_t>(n),
               MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && errno != EINTR && !WouldBlock()) return false;
    const size_t done = sent > 0 ? static_cast<size_t>(sent) : 0;
    if (done < static_cast<size_t>(n))
      d.pending.assign(buffer + done, n - done);
    return true;
  }

  // One splice from `from` into the direction's pipe (flushed by the caller's
  // next FlushHeld). False on an error.
  bool SpliceSome(Direction& d) {
    const ssize_t n =
        splice(d.from->native_handle(), nullptr, d.pipe_write, nullptr,
               kPipeBytes, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n < 0) return ReadFailed(d);
    if (n == 0) {
      d.eof = true;
      return true;
    }
    // Bulk: more has usually arrived by the time the pipe is flushed; the
    // next read finds out.
    d.moved += static_cast<uint64_t>(n);
    d.in_pipe += static_cast<size_t>(n);
    return true;
  }

  bool ReadFailed(Direction& d) {
    if (errno == EINTR) return true;
    if (WouldBlock()) {
      d.readable = false;
      return true;
    }
    return false;
  }

  // Gives `d` its pipe. Without one worth splicing through (none left, or too
  // small), `d` keeps copying: the connection works either way.
  void GoBulk(Direction& d) {
    d.bulk = true;
    if (d.to == &tcp_) {
      // Best effort: the relay is correct with any buffer size.
      setsockopt(tcp_.native_handle(), SOL_SOCKET, SO_SNDBUF, &kBulkSendBuffer,
                 sizeof(kBulkSendBuffer));
    }
    BlockSigpipeOnThisThread();
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return;
    d.pipe_read = fds[0];
    d.pipe_write = fds[1];
    int size = fcntl(d.pipe_write, F_SETPIPE_SZ, kPipeBytes);
    if (size < 0) size = fcntl(d.pipe_write, F_GETPIPE_SZ);
    if (size < kMinPipeBytes) ClosePipe(d);
  }

  static void ClosePipe(Direction& d) {
    if (d.pipe_read >= 0) close(d.pipe_read);
    if (d.pipe_write >= 0) close(d.pipe_write);
    d.pipe_read = d.pipe_write = -1;
    d.in_pipe = 0;
  }

  void ForwardEof(Direction& d) {
    asio::error_code ignored;
    d.to->shutdown(asio::socket_base::shutdown_send, ignored);
    d.done = true;
    ClosePipe(d);
    if (up_.done && down_.done) Close(/*reset=*/false);
  }

  void Wait(Direction& d, asio::socket_base::wait_type type) {
    Socket& socket = type == asio::socket_base::wait_read ? *d.from : *d.to;
    socket.async_wait(type, [self = shared_from_this(), &d,
                             type](const asio::error_code& error) {
      if (error || self->closed_) return;
      if (type == asio::socket_base::wait_read) d.readable = true;
      self->Pump(d);
    });
  }

  void Yield(Direction& d) {
    asio::post(io_, [self = shared_from_this(), &d] {
      if (!self->closed_) self->Pump(d);
    });
  }

  void Close(bool reset) {
    if (closed_) return;
    closed_ = true;
    asio::error_code ignored;
    if (reset) tcp_.set_option(asio::socket_base::linger(true, 0), ignored);
    tcp_.close(ignored);
    unix_.close(ignored);
    ClosePipe(up_);
    ClosePipe(down_);
  }

  asio::io_context& io_;
  Socket tcp_;
  Socket unix_;
  Direction up_;    // tcp -> unix
  Direction down_;  // unix -> tcp
  bool closed_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<NetBridge>> NetBridge::Create(
    asio::io_context& io, const std::vector<BridgeRoute>& routes) {
  auto bridge = std::unique_ptr<NetBridge>(new NetBridge(io));
  for (const BridgeRoute& route : routes) {
    asio::error_code error;
    const asio::ip::tcp::endpoint endpoint(
        asio::ip::make_address(route.listen_address, error), route.listen_port);
    if (error) return absl::InvalidArgumentError(error.message());
    auto listener = std::make_unique<Listener>(
        Listener{asio::ip::tcp::acceptor(io), route.unix_path});
    listener->acceptor.open(endpoint.protocol(), error);
    if (!error)
      listener->acceptor.set_option(asio::socket_base::reuse_address(true),
                                    error);
    if (!error) listener->acceptor.bind(endpoint, error);
    if (!error)
      listener->acceptor.listen(asio::socket_base::max_listen_connections,
                                error);
    if (error) {
      return absl::FailedPreconditionError(
          absl::StrCat("bridge: cannot listen on ", route.listen_address, ":",
                       route.listen_port, ": ", error.message()));
    }
    bridge->listeners_.push_back(std::move(listener));
  }
  return bridge;
}

void NetBridge::Start() {
  for (auto& listener : listeners_) Accept(*listener);
}

std::vector<uint16_t> NetBridge::ports() const {
  std::vector<uint16_t> ports;
  for (const auto& listener : listeners_) {
    asio::error_code error;
    ports.push_back(listener->acceptor.local_endpoint(error).port());
  }
  return ports;
}

void NetBridge::Accept(Listener& listener) {
  auto relay = std::make_shared<Relay>(io_);
  listener.acceptor.async_accept(
      relay->tcp(), [this, &listener, relay](const asio::error_code& error) {
        if (error == asio::error::operation_aborted) return;
        if (!error) relay->Connect(listener.unix_path);
        Accept(listener);
      });
}

}  // namespace ccsandbox::launcher
