// Internal: the byte relay between a client and its upstream once the proxy said yes: a
// SocketRelay (base/socket_relay.h, which says how bytes move and how a relay ends) with the
// proxy's pipe and buffer sizes and the session's idle and half-open timeouts, counted among the
// session's children until it ends.
#ifndef CCSANDBOX_PROXY_TUNNEL_H_
#define CCSANDBOX_PROXY_TUNNEL_H_

#include <memory>
#include <string>

#include "asio/ip/tcp.hpp"
#include "base/socket_relay.h"
#include "proxy/session_state.h"

namespace ccsandbox::proxy {

class Tunnel : public SessionChild {
 public:
  // `to_client` / `to_upstream` are written before any relayed byte (a CONNECT 200, a SOCKS5
  // reply, a forwarded request head, bytes the client sent early).
  static void Start(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                    asio::ip::tcp::socket upstream, std::string to_client, std::string to_upstream);

  Tunnel(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
         asio::ip::tcp::socket upstream);

  void Close() override;

 private:
  SocketRelay relay_;  // local: the client
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_TUNNEL_H_
