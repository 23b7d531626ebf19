#include "proxy/tunnel.h"

#include <memory>
#include <utility>

#include "absl/time/time.h"

namespace ccsandbox::proxy {
namespace {

SocketRelayOptions TunnelOptions(const ProxyTimeouts& timeouts) {
  SocketRelayOptions options;
  // Bytes a bulk direction's pipe holds: fewer system calls per byte. Pipe pages are charged to
  // the user; past the kernel's per-user budget a pipe stays small and the direction copies.
  options.pipe_bytes = 1 << 20;
  // The send buffer of the client's socket once the download is bulk (the kernel doubles it).
  // The client is on this host, so a small buffer costs no throughput, and it keeps the bytes in
  // flight few: the reader then copies them while they are still in the CPU cache, and the
  // proxy's own transmit path does less per byte. The upstream's sockets keep the kernel's
  // autotuning: their window has to cover the path's bandwidth-delay product.
  options.local_send_buffer = 128 * 1024;
  options.idle = absl::ToChronoNanoseconds(timeouts.idle);
  options.half_open = absl::ToChronoNanoseconds(timeouts.half_open);
  return options;
}

}  // namespace

Tunnel::Tunnel(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
               asio::ip::tcp::socket upstream)
    : SessionChild(state),
      relay_(SocketRelay::Socket(std::move(client)), SocketRelay::Socket(std::move(upstream)),
             TunnelOptions(state->options().timeouts)) {}

void Tunnel::Start(std::shared_ptr<SessionState> state, asio::ip::tcp::socket client,
                   asio::ip::tcp::socket upstream, std::string to_client, std::string to_upstream) {
  auto tunnel = std::make_shared<Tunnel>(state, std::move(client), std::move(upstream));
  state->Register(tunnel);  // closes it at once when the session is stopping
  tunnel->relay_.Start(tunnel, std::move(to_client), std::move(to_upstream));
}

void Tunnel::Close() { relay_.Close(); }

}  // namespace ccsandbox::proxy
