// Internal: what the HTTP and SOCKS5 proxies' client connections share, from the client's first
// byte until the connection becomes a Tunnel or is closed: the client socket and its bounded
// negotiation buffer, one timer (the handshake deadline, then the grace period of an error
// reply), the upstream connector, an error reply followed by a drain, and the hand-off to a
// Tunnel. A subclass parses its protocol in OnBytes() and decides.
//
//   class MyProxyConnection : public ClientConnection {
//     void OnBytes() override;                          // parse buffer(); Read() for more
//     void OnHandshakeTimeout() override;               // the handshake deadline passed
//     void OnUpstream(UpstreamResult result) override;  // ConnectUpstream finished
//   };
//   ClientConnection::Start<MyProxyConnection>(state, std::move(socket), over_limit);
//
// Every member function runs on the loop thread; none of the hooks runs after Close().
#ifndef CCSANDBOX_PROXY_CLIENT_CONNECTION_H_
#define CCSANDBOX_PROXY_CLIENT_CONNECTION_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "asio/ip/tcp.hpp"
#include "asio/steady_timer.hpp"
#include "policy/egress/allowlist.h"
#include "proxy/session_state.h"
#include "proxy/upstream_connector.h"

namespace ccsandbox::proxy {

class ClientConnection : public SessionChild {
 public:
  // Creates a `Connection` (constructed from (state, client, over_limit)), registers it with the
  // session (a connection `over_limit` counts as refusing) and starts its handshake.
  template <typename Connection>
  static void Start(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                    bool over_limit) {
    auto connection = std::make_shared<Connection>(state, std::move(client), over_limit);
    state->Register(connection, /*refusing=*/over_limit);
    static_cast<ClientConnection&>(*connection).Begin();
  }

  // Closes the client (and cancels a connect in flight). Idempotent.
  void Close() override;

 protected:
  struct ReadLimits {
    size_t chunk = 0;     // bytes asked for per read (negotiation and drain)
    size_t buffered = 0;  // the most the negotiation may buffer
  };
  // `over_limit`: the session is at its connection limit; the subclass refuses the request.
  ClientConnection(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                   bool over_limit, ReadLimits limits);

  // New bytes are at the end of buffer().
  virtual void OnBytes() = 0;
  // The handshake deadline passed with no error reply under way.
  virtual void OnHandshakeTimeout() = 0;
  // The upstream connector finished.
  virtual void OnUpstream(UpstreamResult result) = 0;

  // Appends what the client sends next (at most a chunk) to buffer(), then OnBytes(). Closes on
  // EOF or an error, and when the buffer is full already.
  void Read();
  // Writes `bytes`, then runs `next`; closes on an error.
  void WriteThen(std::string bytes, std::function<void()> next);
  // Writes an error reply, then drains the client until it closes, within a grace period.
  // Only the first call does anything.
  void ReplyAndClose(std::string bytes);
  // Connects to the allowed `decision` on `port`; OnUpstream() follows.
  void ConnectUpstream(policy::EgressDecision decision, uint16_t port);
  bool connecting() const { return connector_ != nullptr; }
  // Hands the client and `upstream` to a Tunnel (see Tunnel::Start), which takes this
  // connection's place in the session; this connection is done.
  void BecomeTunnel(asio::ip::tcp::socket upstream, std::string to_client, std::string to_upstream);

  std::string& buffer() { return buffer_; }
  bool over_limit() const { return over_limit_; }
  bool closed() const { return closed_; }

 private:
  void Begin();
  void ArmTimer(std::chrono::nanoseconds timeout);
  // Closing with unread request bytes makes the kernel send a reset, which can destroy the
  // error reply before the client reads it: finish sending, then read until the client closes
  // (or the grace timer fires).
  void DrainAndClose();
  std::shared_ptr<ClientConnection> self();

  asio::ip::tcp::socket client_;
  asio::steady_timer timer_;
  const ReadLimits limits_;
  const bool over_limit_;
  std::string buffer_;
  std::shared_ptr<UpstreamConnector> connector_;
  bool replying_ = false;
  bool closed_ = false;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_CLIENT_CONNECTION_H_
