// Relays bytes both ways between two connected stream sockets on an Asio loop: the egress
// proxy's tunnels (proxy/tunnel.h) and the sandbox's egress bridge (launcher/shim/net_bridge.h).
//
// Each direction starts by copying through one 64 KiB buffer shared by the loop's thread (small
// exchanges, TLS handshakes and API calls cost two system calls a chunk and no per-relay
// memory); once it has moved 256 KiB it splices through a pipe of its own (`pipe_bytes`), so bulk
// bytes never pass through user memory. A bulk download also shrinks the local side's send
// buffer (the local peer is on this host: fewer bytes in flight stay in the CPU cache). Without a
// pipe worth splicing through it keeps copying: pipe2 failed (no descriptors left), or the kernel
// would not make the pipe `min_pipe_bytes` (past the user's pipe budget an unprivileged process
// gets 8 KiB pipes that cannot grow, and splicing through those costs far more than copying). A
// direction moves at most 1 MiB per handler, then queues behind the loop's other work. Bytes a
// slow receiver cannot take yet wait in that pipe or, when copying, in a per-direction buffer
// freed as soon as it drains: an idle relay holds no buffer.
//
// EOF from one side becomes shutdown(SHUT_WR) on the other. The relay ends when both directions
// have ended (both sockets closed), or, with a reset of both sides so that a cut transfer never
// looks complete, on the first error, on the idle or half-open timeout, or on Close(). The
// loop's thread blocks SIGPIPE once a direction splices (splice(2) into a socket whose peer is
// gone raises it: it has no MSG_NOSIGNAL); the process's disposition is left as it was.
//
//   // The owner keeps the relay; each pending handler keeps the owner.
//   struct Tunnel { SocketRelay relay; ... };
//   auto tunnel = std::make_shared<Tunnel>(...);   // relay{Socket(std::move(tcp)), ...}
//   tunnel->relay.Start(tunnel, "HTTP/1.1 200 Connection established\r\n\r\n", "");
//
// Threads: every member function runs on the sockets' loop thread (one thread runs the loop).
#ifndef CCSANDBOX_BASE_SOCKET_RELAY_H_
#define CCSANDBOX_BASE_SOCKET_RELAY_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "asio/generic/stream_protocol.hpp"
#include "asio/steady_timer.hpp"
#include "base/unique_fd.h"

namespace ccsandbox {

struct SocketRelayOptions {
  // A bulk direction's pipe (F_SETPIPE_SZ): fewer system calls per byte. Its pages count against
  // the user's pipe budget for as long as the direction lasts.
  int pipe_bytes = 256 * 1024;
  // A direction whose pipe the kernel leaves smaller than this copies instead of splicing.
  int min_pipe_bytes = 64 * 1024;
  // SO_SNDBUF of the local socket once the download into it is bulk (the kernel doubles it).
  int local_send_buffer = 256 * 1024;
  // No bytes either way for `idle`, or, once one direction has ended, for `half_open`: the relay
  // resets both sides. Zero: no such timeout.
  std::chrono::nanoseconds idle{0};
  std::chrono::nanoseconds half_open{0};
};

class SocketRelay {
 public:
  // Both ends as one type: a TCP, Unix or any other stream socket converts to it (moving a
  // socket of another protocol keeps its descriptor and its registration with the loop).
  using Socket = asio::generic::stream_protocol::socket;

  // The sockets may still be closed: accept or connect into local() / remote() before Start.
  SocketRelay(Socket local, Socket remote, SocketRelayOptions options = {});
  ~SocketRelay();
  SocketRelay(const SocketRelay&) = delete;
  SocketRelay& operator=(const SocketRelay&) = delete;

  // `local` is the peer on this host (its send buffer shrinks for bulk downloads).
  Socket& local() { return local_; }
  Socket& remote() { return remote_; }

  // Sends `to_local` / `to_remote` ahead of any relayed byte, then relays. Every handler the
  // relay leaves pending holds `owner` (the object that owns this relay, which may be the relay
  // itself), so the relay lives as long as it has work. Nothing happens after Close().
  void Start(const std::shared_ptr<void>& owner, std::string to_local = {},
             std::string to_remote = {});
  // Ends the relay now; both sides get a reset. Idempotent.
  void Close();
  bool closed() const { return closed_; }

  // What one direction has done so far.
  struct DirectionStats {
    uint64_t bytes = 0;    // relayed (not counting the bytes given to Start)
    bool spliced = false;  // got a pipe worth splicing through once it was bulk
  };
  DirectionStats to_local_stats() const { return Stats(to_local_); }
  DirectionStats to_remote_stats() const { return Stats(to_remote_); }

 private:
  struct Direction {
    Socket* from = nullptr;
    Socket* to = nullptr;
    // Bytes held in user memory: the ones given to Start, or what a short send left behind.
    std::string pending;
    size_t pending_sent = 0;
    UniqueFd pipe_read;
    UniqueFd pipe_write;
    size_t in_pipe = 0;
    uint64_t moved = 0;  // read from `from`
    uint64_t sent = 0;   // written to `to`
    bool bulk = false;   // past the copy phase: spliced if it got a pipe
    bool spliced = false;
    // False after a short read: the next read waits for readiness first instead of making a
    // call that would only return EAGAIN. Asio re-arms the descriptor when a wait starts, so
    // bytes that arrived before the wait still wake it.
    bool readable = false;
    bool eof = false;   // `from` sent FIN
    bool done = false;  // and it was forwarded to `to`
  };
  // What a direction does once it cannot move more bytes right now.
  enum class Next { kWaitRead, kWaitWrite, kYield, kForwardEof, kFail };
  enum class Flush { kEmpty, kBlocked, kFailed };

  static DirectionStats Stats(const Direction& d) { return {d.moved, d.spliced}; }
  void Pump(Direction& d);
  Next Move(Direction& d);
  Flush FlushHeld(Direction& d);
  bool CopySome(Direction& d);
  bool SpliceSome(Direction& d);
  bool ReadFailed(Direction& d);
  void GoBulk(Direction& d);
  static void ClosePipe(Direction& d);
  void ForwardEof(Direction& d);
  void Wait(Direction& d, asio::socket_base::wait_type type);
  // Continues `d` from a fresh handler, after whatever else the loop has ready.
  void Yield(Direction& d);
  bool timed() const;
  std::chrono::nanoseconds Timeout() const;
  void ArmTimer();
  void OnTimer();
  void Shutdown(bool reset);

  const SocketRelayOptions options_;
  Socket local_;
  Socket remote_;
  asio::steady_timer timer_;
  Direction to_remote_;  // local -> remote
  Direction to_local_;   // remote -> local
  std::weak_ptr<void> owner_;
  std::chrono::steady_clock::time_point last_activity_;
  bool closed_ = false;
};

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_SOCKET_RELAY_H_
