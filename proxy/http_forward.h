// The request head the HTTP proxy sends upstream for an absolute-form request. Pure.
//
//   std::string head = BuildForwardedRequestHead(request, target);
//   // "GET /path?q HTTP/1.1\r\nHost: allowed.test:8080\r\n...Connection: close\r\n\r\n"
//
// The request line gets origin-form. Host is replaced by the target's authority (an origin
// server must never see a different Host than the one the policy checked). Hop-by-hop fields
// are dropped: Connection and the fields it names, Keep-Alive, Proxy-Connection,
// Proxy-Authorization (the sandbox's proxy credentials never leave the host), Proxy-
// Authenticate, TE, Trailer, Upgrade. Content-Length and Transfer-Encoding stay: the body is
// relayed as it comes, framed as the client framed it. "Connection: close" ends the
// exchange after one response: the upstream connection serves the one request the policy saw
// (bytes a client pipelines behind it can only reach the same checked host:port, which closes).
#ifndef CCSANDBOX_PROXY_HTTP_FORWARD_H_
#define CCSANDBOX_PROXY_HTTP_FORWARD_H_

#include <string>

#include "proxy/http_head_parser.h"

namespace ccsandbox::proxy {

std::string BuildForwardedRequestHead(const HttpRequestHead& request,
                                      const AbsoluteHttpTarget& target);

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_HTTP_FORWARD_H_
