// Inside the sandbox's network namespace: relays each TCP connection accepted
// on a loopback port to a Unix socket bound in from the host (the session's
// proxy), all on one Asio event loop — no process or thread per connection (a
// fork-per-connection bridge caps at a few hundred connections a second on
// these machines).
//
// At most min(1024, what RLIMIT_NOFILE leaves room for) connections are relayed at once; one
// beyond that is accepted and closed at once, so a command holding thousands of connections
// cannot take the descriptors its process needs for anything else.
//
// Each connection is a SocketRelay (base/socket_relay.h: copied while small,
// spliced once bulk, copied again without a pipe worth having; EOF forwarded as
// shutdown(SHUT_WR); the first error resets both sides) with a 256 KiB pipe per
// bulk direction and no timeouts. The loop's thread blocks SIGPIPE once it
// splices; the process's disposition is left as it was.
//
//   asio::io_context io;
//   auto bridge = NetBridge::Create(
//       io, {{"127.0.0.1", 3128, "/run/ccsandbox/http.sock"}});
//   (*bridge)->Start();  io.run();
#ifndef CCSANDBOX_LAUNCHER_SHIM_NET_BRIDGE_H_
#define CCSANDBOX_LAUNCHER_SHIM_NET_BRIDGE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "asio.hpp"
#include "launcher/shim/shim_args.h"

namespace ccsandbox::launcher {

class NetBridge {
 public:
  // Binds and listens on every route now, so connections made before the loop
  // runs wait in the backlog instead of failing.
  static absl::StatusOr<std::unique_ptr<NetBridge>> Create(asio::io_context& io,
                                                           const std::vector<BridgeRoute>& routes);
  void Start();
  // The bound ports, in route order.
  std::vector<uint16_t> ports() const;

 private:
  struct Listener {
    asio::ip::tcp::acceptor acceptor;
    std::string unix_path;
  };
  struct Tracked;
  explicit NetBridge(asio::io_context& io) : io_(io) {}
  void Accept(Listener& listener);
  void Connect(std::shared_ptr<Tracked> tracked, const std::string& unix_path);

  asio::io_context& io_;
  std::shared_ptr<int> live_ = std::make_shared<int>(0);  // connections being relayed
  int max_live_ = 0;
  std::vector<std::unique_ptr<Listener>> listeners_;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SHIM_NET_BRIDGE_H_
