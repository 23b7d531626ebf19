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

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "asio/ip/tcp.hpp"
#include "asio/steady_timer.hpp"
#include "proxy/session_state.h"
#include "proxy/socks5_parser.h"
#include "proxy/upstream_connector.h"

namespace ccsandbox::proxy {

class Socks5ProxyConnection : public SessionChild {
 public:
  // `over_limit`: see HttpProxyConnection::Start.
  static void Start(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                    bool over_limit = false);

  Socks5ProxyConnection(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                        bool over_limit);
  void Close() override;

 private:
  enum class Phase { kGreeting, kAuth, kRequest, kConnecting, kDone };

  void Begin();
  void ArmTimer(std::chrono::nanoseconds timeout);
  void Read();
  void OnBytes();
  void HandleRequest(const Socks5Request& request);
  void OnUpstream(UpstreamResult result);
  void WriteThen(std::string bytes, std::function<void()> next);
  void FailAndClose(uint8_t reply);
  void DrainAndClose();
  std::shared_ptr<Socks5ProxyConnection> self();

  asio::ip::tcp::socket client_;
  asio::steady_timer timer_;
  std::string buffer_;
  Phase phase_ = Phase::kGreeting;
  std::string target_;
  std::shared_ptr<UpstreamConnector> connector_;
  const bool over_limit_;
  bool closed_ = false;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_SOCKS5_PROXY_H_
