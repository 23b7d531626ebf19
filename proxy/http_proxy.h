// Internal: one client connection to a session's HTTP proxy, from the first byte of its request
// head until it becomes a Tunnel or is answered with an error.
//
//   CONNECT host:port            -> policy -> resolve + guard -> connect -> "200 Connection
//                                   established", then a tunnel (https, ssh, any TCP)
//   GET http://host[:port]/p     -> same checks -> the request forwarded in origin-form with the
//                                   hop-by-hop fields removed and Connection: close, then the
//                                   response relayed back (policy/http_forward.h)
//
// Answers: 400 malformed, 403 refused by policy (X-Sandbox-Reason says why; a violation is
// reported), 407 missing or wrong credentials (only when the session has credentials), 408 no
// complete head within the handshake timeout, 431 head over 16 KiB or too many fields, 502
// upstream unreachable or unresolvable, 504 upstream did not answer in time, 505 other HTTP
// versions, 503 over the session's (or the broker's) connection limit. Every error response
// closes the connection.
#ifndef CCSANDBOX_PROXY_HTTP_PROXY_H_
#define CCSANDBOX_PROXY_HTTP_PROXY_H_

#include <memory>
#include <string>
#include <utility>

#include "asio/ip/tcp.hpp"
#include "proxy/client_connection.h"
#include "proxy/http_head_parser.h"
#include "proxy/session_state.h"
#include "proxy/upstream_connector.h"

namespace ccsandbox::proxy {

class HttpProxyConnection : public ClientConnection {
 public:
  // `over_limit`: the session is at its connection limit; the request is read and, unless
  // the policy refuses it anyway (403), answered 503 with a violation naming its target.
  static void Start(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                    bool over_limit = false) {
    ClientConnection::Start<HttpProxyConnection>(std::move(state), std::move(client), over_limit);
  }

  HttpProxyConnection(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                      bool over_limit);

 private:
  void OnBytes() override;
  void OnHandshakeTimeout() override;
  void OnUpstream(UpstreamResult result) override;
  void Handle(const HttpRequestHead& head, size_t head_size);
  void Refuse(const std::string& target, const std::string& reason);
  void Reply(int status, const std::string& reason, const std::string& extra_headers = "");
  bool Authorized(const HttpRequestHead& head) const;

  size_t scanned_ = 0;
  size_t head_size_ = 0;
  bool is_connect_ = false;
  std::string forwarded_head_;
  std::string target_;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_HTTP_PROXY_H_
