#include "launcher/shim/net_bridge.h"

#include <sys/resource.h>

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/socket_relay.h"

namespace ccsandbox::launcher {
namespace {

SocketRelayOptions BridgeOptions() {
  SocketRelayOptions options;
  // A bulk direction's pipe. Its pages count against the user's pipe budget
  // (fs.pipe-user-pages-soft, 64 MiB shared by all of the user's processes, the
  // sandboxed command's own pipes included) for as long as the connection
  // lasts; 256 KiB moved bulk as fast as 1 MiB in egress_bench (the proxy's
  // Unix socket rarely holds more).
  options.pipe_bytes = 256 * 1024;
  // The TCP socket's send buffer once a download is bulk. A smaller buffer than
  // autotuning's keeps fewer bytes in flight (egress_bench: less CPU in the
  // bridge and in the client).
  options.local_send_buffer = 256 * 1024;
  return options;
}

// Descriptors one connection may hold: its two sockets and two pipes per bulk direction.
constexpr int kFdsPerConnection = 6;
// Descriptors kept for everything else (a warm sandbox's init receives each Exec's).
constexpr int kReservedFds = 64;
constexpr int kMaxConnections = 1024;

// How many connections the process's descriptor limit leaves room for.
int ConnectionLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return kMaxConnections;
  const rlim_t room = limit.rlim_cur > kReservedFds ? limit.rlim_cur - kReservedFds : 0;
  return static_cast<int>(std::min<rlim_t>(kMaxConnections, room / kFdsPerConnection));
}

}  // namespace

// One relayed connection, counted while it lives.
struct NetBridge::Tracked {
  Tracked(std::shared_ptr<SocketRelay> r, std::shared_ptr<int> l)
      : relay(std::move(r)), live(std::move(l)) {
    ++*live;
  }
  ~Tracked() { --*live; }
  std::shared_ptr<SocketRelay> relay;
  std::shared_ptr<int> live;  // shared: a relay may outlive the bridge in the loop's queue
};

// Connects the relay's remote side to the session's proxy, then relays. On
// failure the client sees its connection close.
void NetBridge::Connect(std::shared_ptr<Tracked> tracked, const std::string& unix_path) {
  asio::error_code ignored;
  tracked->relay->local().set_option(asio::ip::tcp::no_delay(true), ignored);
  tracked->relay->remote().async_connect(asio::local::stream_protocol::endpoint(unix_path),
                                         [tracked](const asio::error_code& error) {
                                           if (error) return;
                                           tracked->relay->Start(tracked);
                                         });
}

absl::StatusOr<std::unique_ptr<NetBridge>> NetBridge::Create(
    asio::io_context& io, const std::vector<BridgeRoute>& routes) {
  auto bridge = std::unique_ptr<NetBridge>(new NetBridge(io));
  bridge->max_live_ = ConnectionLimit();
  for (const BridgeRoute& route : routes) {
    asio::error_code error;
    const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(route.listen_address, error),
                                           route.listen_port);
    if (error) return absl::InvalidArgumentError(error.message());
    auto listener =
        std::make_unique<Listener>(Listener{asio::ip::tcp::acceptor(io), route.unix_path});
    listener->acceptor.open(endpoint.protocol(), error);
    if (!error) listener->acceptor.set_option(asio::socket_base::reuse_address(true), error);
    if (!error) listener->acceptor.bind(endpoint, error);
    if (!error) listener->acceptor.listen(asio::socket_base::max_listen_connections, error);
    if (error) {
      return absl::FailedPreconditionError(absl::StrCat("bridge: cannot listen on ",
                                                        route.listen_address, ":",
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
  // Local: the TCP client inside the sandbox; remote: the proxy's Unix socket.
  auto relay = std::make_shared<SocketRelay>(SocketRelay::Socket(io_), SocketRelay::Socket(io_),
                                             BridgeOptions());
  listener.acceptor.async_accept(
      relay->local(), [this, &listener, relay](const asio::error_code& error) {
        if (error == asio::error::operation_aborted) return;
        if (!error && *live_ >= max_live_) {
          // Full: this one is closed at once (its client sees
          // the connection end), and the process keeps its
          // descriptors for the rest of its work.
          asio::error_code ignored;
          relay->local().close(ignored);
        } else if (!error) {
          Connect(std::make_shared<Tracked>(relay, live_), listener.unix_path);
        }
        Accept(listener);
      });
}

}  // namespace ccsandbox::launcher
