// Internal: one client connection to a session's SOCKS5 proxy (RFC 1928), from the greeting
// until it becomes a Tunnel or gets a failure reply.
//
// Methods: no-auth and username/password (RFC 1929). Without session credentials, no-auth is
// preferred and any username/password is accepted and ignored; with them, only
// username/password with the right pair. Commands: CONNECT to a domain name (resolved here, so
// socks5h semantics), an IPv4 or an IPv6 address. Replies: 0x02 for a destination the policy
// refuses (with a violation), 0x07 for BIND and UDP ASSOCIATE (also reported as a violation:
// the sandbox tried a kind of network access it does not have), 0x08 for an unknown address
// type, 0x04 when resolving fails or the upstream does not answer in time, 0x05 when it
// refuses, 0x03 when its network is unreachable, 0x01 otherwise — and 0x01, with a violation
// naming the target, over the session's (or the broker's) connection limit.
#ifndef CCSANDBOX_PROXY_SOCKS5_PROXY_H_
#define CCSANDBOX_PROXY_SOCKS5_PROXY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "asio/ip/tcp.hpp"
#include "proxy/client_connection.h"
#include "proxy/session_state.h"
#include "proxy/socks5_parser.h"
#include "proxy/upstream_connector.h"

namespace ccsandbox::proxy {

class Socks5ProxyConnection : public ClientConnection {
 public:
  // `over_limit`: see HttpProxyConnection::Start.
  static void Start(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                    bool over_limit = false) {
    ClientConnection::Start<Socks5ProxyConnection>(std::move(state), std::move(client), over_limit);
  }

  Socks5ProxyConnection(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                        bool over_limit);

 private:
  enum class Phase { kGreeting, kAuth, kRequest, kConnecting, kDone };

  void OnBytes() override;
  void OnHandshakeTimeout() override;
  void OnUpstream(UpstreamResult result) override;
  void HandleRequest(const Socks5Request& request);
  // Sends `bytes` (a refusal), then closes.
  void Refuse(std::string bytes);

  Phase phase_ = Phase::kGreeting;
  std::string target_;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_SOCKS5_PROXY_H_
