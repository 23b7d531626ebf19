// Inside the sandbox's network namespace: relays each TCP connection accepted
// on a loopback port to a Unix socket bound in from the host (the session's
// proxy), all on one Asio event loop — no process or thread per connection (a
// fork-per-connection bridge caps at a few hundred connections a second on
// these machines).
//
// Each direction starts by copying through one 64 KiB buffer shared by the loop
// (small exchanges cost two system calls a chunk and no per-connection memory);
// once it has moved 256 KiB it splices through a pipe of its own (256 KiB),
// so bulk bytes never pass through user memory; a bulk download also shrinks
// the TCP socket's send buffer (the client is local: fewer bytes in flight stay
// in the CPU cache). Without a pipe worth having (the user's pipe budget is
// spent, no descriptors left) it keeps copying. A direction moves at most 1 MiB
// per handler, then queues behind the loop's other connections. Bytes a slow
// receiver cannot take yet wait in that pipe or, when copying, in a buffer
// freed as soon as it drains: an idle connection holds no buffer. EOF from one
// side becomes shutdown(SHUT_WR) on the other; the first error closes both
// sides (the TCP client gets a reset). The loop's thread blocks SIGPIPE once it
// splices (splice(2) into a closed socket raises it); the process's disposition
// is left as it was.
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
  static absl::StatusOr<std::unique_ptr<NetBridge>> Create(
      asio::io_context& io, const std::vector<BridgeRoute>& routes);
  void Start();
  // The bound ports, in route order.
  std::vector<uint16_t> ports() const;

 private:
  struct Listener {
    asio::ip::tcp::acceptor acceptor;
    std::string unix_path;
  };
  explicit NetBridge(asio::io_context& io) : io_(io) {}
  void Accept(Listener& listener);

  asio::io_context& io_;
  std::vector<std::unique_ptr<Listener>> listeners_;
};

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SHIM_NET_BRIDGE_H_
