#include "launcher/net_bridge.h"

#include <array>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox::launcher {
namespace {

constexpr size_t kBuffer = 128 * 1024;

// One relayed connection: two pumps (tcp -> unix, unix -> tcp). Each pump forwards until
// EOF, then half-closes the other side; the connection dies with its last pump.
class Relay : public std::enable_shared_from_this<Relay> {
 public:
  Relay(asio::ip::tcp::socket tcp, asio::local::stream_protocol::socket unix_socket)
      : tcp_(std::move(tcp)), unix_(std::move(unix_socket)) {}

  void Start() {
    Pump(tcp_, unix_, to_unix_);
    Pump(unix_, tcp_, to_tcp_);
  }

 private:
  template <typename From, typename To>
  void Pump(From& from, To& to, std::array<char, kBuffer>& buffer) {
    auto self = shared_from_this();
    from.async_read_some(asio::buffer(buffer), [this, self, &from, &to, &buffer](
                                                   const asio::error_code& error, size_t n) {
      if (error) {
        asio::error_code ignored;
        if (error == asio::error::eof) {
          to.shutdown(asio::socket_base::shutdown_send, ignored);
        } else {
          Close();
        }
        return;
      }
      asio::async_write(to, asio::buffer(buffer.data(), n),
                        [this, self, &from, &to, &buffer](const asio::error_code& error, size_t) {
                          if (error) {
                            Close();
                            return;
                          }
                          Pump(from, to, buffer);
                        });
    });
  }

  void Close() {
    asio::error_code ignored;
    tcp_.close(ignored);
    unix_.close(ignored);
  }

  asio::ip::tcp::socket tcp_;
  asio::local::stream_protocol::socket unix_;
  std::array<char, kBuffer> to_unix_;
  std::array<char, kBuffer> to_tcp_;
};

}  // namespace

absl::StatusOr<BridgeRoute> ParseBridgeRoute(const std::string& text) {
  const size_t eq = text.find('=');
  const size_t colon = text.rfind(':', eq);
  if (eq == std::string::npos || colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bridge: '", text, "' is not ADDRESS:PORT=UNIX_PATH"));
  }
  BridgeRoute route;
  route.listen_address = text.substr(0, colon);
  if (route.listen_address.size() > 2 && route.listen_address.front() == '[' &&
      route.listen_address.back() == ']') {
    route.listen_address = route.listen_address.substr(1, route.listen_address.size() - 2);
  }
  uint32_t port;
  if (!absl::SimpleAtoi(text.substr(colon + 1, eq - colon - 1), &port) || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bridge: bad port in '", text, "'"));
  }
  route.listen_port = static_cast<uint16_t>(port);
  route.unix_path = text.substr(eq + 1);
  if (route.unix_path.empty() || route.unix_path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("bridge: '", text, "' needs an absolute path"));
  }
  asio::error_code error;
  asio::ip::address address = asio::ip::make_address(route.listen_address, error);
  if (error || !address.is_loopback()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bridge: '", route.listen_address, "' is not a loopback address"));
  }
  return route;
}

absl::StatusOr<std::unique_ptr<NetBridge>> NetBridge::Create(
    asio::io_context& io, const std::vector<BridgeRoute>& routes) {
  auto bridge = std::unique_ptr<NetBridge>(new NetBridge(io));
  for (const BridgeRoute& route : routes) {
    asio::error_code error;
    const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(route.listen_address, error),
                                           route.listen_port);
    if (error) return absl::InvalidArgumentError(error.message());
    auto listener = std::make_unique<Listener>(Listener{asio::ip::tcp::acceptor(io), route.unix_path});
    listener->acceptor.open(endpoint.protocol(), error);
    if (!error) listener->acceptor.set_option(asio::socket_base::reuse_address(true), error);
    if (!error) listener->acceptor.bind(endpoint, error);
    if (!error) listener->acceptor.listen(asio::socket_base::max_listen_connections, error);
    if (error) {
      return absl::FailedPreconditionError(absl::StrCat(
          "bridge: cannot listen on ", route.listen_address, ":", route.listen_port, ": ",
          error.message()));
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
  listener.acceptor.async_accept([this, &listener](const asio::error_code& error,
                                                   asio::ip::tcp::socket tcp) {
    if (error == asio::error::operation_aborted) return;
    if (!error) {
      tcp.set_option(asio::ip::tcp::no_delay(true));
      auto unix_socket = std::make_shared<asio::local::stream_protocol::socket>(io_);
      auto tcp_socket = std::make_shared<asio::ip::tcp::socket>(std::move(tcp));
      unix_socket->async_connect(
          asio::local::stream_protocol::endpoint(listener.unix_path),
          [unix_socket, tcp_socket](const asio::error_code& connect_error) {
            if (connect_error) return;  // the client sees the connection close
            std::make_shared<Relay>(std::move(*tcp_socket), std::move(*unix_socket))->Start();
          });
    }
    Accept(listener);
  });
}

}  // namespace ccsandbox::launcher
