// Internal: the byte relay between a client and its upstream once the proxy said yes.
//
// Each direction starts by copying through one 64 KiB buffer shared by the whole loop (small
// exchanges, TLS handshakes and API calls cost two system calls a chunk and no per-tunnel
// memory); once a direction has moved 256 KiB it switches to zero-copy splice(2) through a
// private pipe of up to 1 MiB, so bulk transfers never pass through user memory. A bulk download
// also shrinks the client socket's send buffer (the client is local: few bytes in flight keep
// them in the CPU cache); the upstream's sockets keep the kernel's autotuning. One direction
// moves at most 1 MiB per handler, then queues behind the loop's other work. Bytes a slow
// receiver cannot take yet stay in that pipe or, on the copy path, in a per-direction buffer
// that is freed as soon as it drains: an idle tunnel holds no buffer at all. Half-close is
// forwarded (EOF from one side becomes shutdown(SHUT_WR) on the other); a tunnel ends when both
// directions have ended, on an error (both sides then get a reset, so a cut transfer never
// looks complete), on the idle or half-open timeout, or on Close().
#ifndef CCSANDBOX_PROXY_TUNNEL_H_
#define CCSANDBOX_PROXY_TUNNEL_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "asio/ip/tcp.hpp"
#include "asio/steady_timer.hpp"
#include "proxy/session_state.h"

namespace ccsandbox::proxy {

class Tunnel : public SessionChild {
 public:
  // `to_client` / `to_upstream` are written before any relayed byte (a CONNECT 200, a SOCKS5
  // reply, a forwarded request head, bytes the client sent early).
  static void Start(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                    asio::ip::tcp::socket upstream, std::string to_client, std::string to_upstream);

  Tunnel(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
         asio::ip::tcp::socket upstream, std::string to_client, std::string to_upstream);
  ~Tunnel() override;

  void Close() override;

 private:
  struct Direction {
    asio::ip::tcp::socket* from = nullptr;
    asio::ip::tcp::socket* to = nullptr;
    std::string pending;
    size_t pending_sent = 0;
    int pipe_read = -1;
    int pipe_write = -1;
    size_t in_pipe = 0;
    bool eof = false;    // `from` has no more bytes
    bool done = false;   // eof forwarded as shutdown(to, SHUT_WR)
    uint64_t moved = 0;  // bytes relayed so far
    // False once a copy-path read came back short: the next read waits for readiness first
    // (small exchanges skip the read that would only return EAGAIN). Asio re-arms
    // the descriptor (EPOLL_CTL_MOD) when a wait starts, so bytes that arrived before the wait
    // still wake it, and the read that would only return EAGAIN is skipped.
    bool readable = false;
  };

  void Begin();
  void Pump(Direction& d);
  void Wait(Direction& d, asio::socket_base::wait_type type);
  // Continues `d` from a fresh handler, after whatever else the loop has ready.
  void Yield(Direction& d);
  bool OpenPipe(Direction& d);
  void ClosePipe(Direction& d);
  void ArmTimer();
  void OnTimer();
  void Shutdown(bool reset);
  std::shared_ptr<Tunnel> self();

  asio::ip::tcp::socket client_;
  asio::ip::tcp::socket upstream_;
  asio::steady_timer timer_;
  Direction up_;    // client -> upstream
  Direction down_;  // upstream -> client
  std::chrono::steady_clock::time_point last_activity_;
  bool closed_ = false;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_TUNNEL_H_
