#include "proxy/session_proxies.h"

#include <sys/socket.h>

#include <chrono>
#include <future>
#include <utility>

#include "absl/strings/str_cat.h"
#include "asio/ip/tcp.hpp"
#include "asio/local/stream_protocol.hpp"
#include "asio/steady_timer.hpp"
#include "base/unique_fd.h"
#include "proxy/http_proxy.h"
#include "proxy/session_state.h"
#include "proxy/socks5_proxy.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::proxy {

// One listening socket of a session and its accept loop.
class Listener : public std::enable_shared_from_this<Listener> {
 public:
  enum class Kind { kHttp, kSocks5 };

  Listener(std::shared_ptr<SessionState> state, Kind kind)
      : state_(std::move(state)),
        kind_(kind),
        acceptor_(state_->context()),
        unix_acceptor_(state_->context()),
        retry_(state_->context()) {}

  // Binds 127.0.0.1:0, or adopts `listen_fd` when it is valid: a TCP socket, or a Unix stream
  // socket (a sandbox's bridge connects there; port 0 is returned).
  absl::StatusOr<uint16_t> Bind(UniqueFd listen_fd) {
    std::error_code ec;
    if (listen_fd.valid()) {
      sockaddr_storage address{};
      socklen_t length = sizeof(address);
      int type = 0;
      socklen_t type_length = sizeof(type);
      if (getsockname(listen_fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
          getsockopt(listen_fd.get(), SOL_SOCKET, SO_TYPE, &type, &type_length) != 0 ||
          type != SOCK_STREAM ||
          (address.ss_family != AF_INET && address.ss_family != AF_INET6 &&
           address.ss_family != AF_UNIX)) {
        return absl::InvalidArgumentError(
            "the listening descriptor given for the egress proxy is not a TCP or Unix stream "
            "socket");
      }
      if (address.ss_family == AF_UNIX) {
        unix_acceptor_.assign(asio::local::stream_protocol(), listen_fd.get(), ec);
        if (!ec) listen_fd.Release();  // the acceptor's now
        if (!ec) unix_acceptor_.listen(asio::socket_base::max_listen_connections, ec);
        if (ec) {
          return absl::UnavailableError(
              absl::StrCat("cannot listen for the egress proxy: ", ec.message()));
        }
        return 0;
      }
      acceptor_.assign(address.ss_family == AF_INET ? asio::ip::tcp::v4() : asio::ip::tcp::v6(),
                       listen_fd.get(), ec);
      if (!ec) listen_fd.Release();  // the acceptor's now
    } else {
      const asio::ip::tcp::endpoint endpoint(asio::ip::address_v4::loopback(), 0);
      acceptor_.open(endpoint.protocol(), ec);
      if (!ec) acceptor_.bind(endpoint, ec);
    }
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    const asio::ip::tcp::endpoint local =
        ec ? asio::ip::tcp::endpoint() : acceptor_.local_endpoint(ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen for the egress proxy: ", ec.message()));
    }
    return local.port();
  }

  void Accept() {
    if (state_->stopping()) return;
    state_->AddPending();
    if (unix_acceptor_.is_open()) {
      unix_acceptor_.async_accept(
          [self = shared_from_this()](const std::error_code& ec,
                                      asio::local::stream_protocol::socket peer) {
            // The proxies treat a client as a plain byte stream (read, write, shutdown, splice),
            // which a Unix stream socket is as well: it is served through the same tcp::socket
            // wrapper, whose TCP-only options simply fail and are ignored.
            asio::ip::tcp::socket socket(self->state_->context());
            std::error_code assign_ec = ec;
            if (!assign_ec) {
              UniqueFd fd(peer.release(assign_ec));
              if (!assign_ec) socket.assign(asio::ip::tcp::v4(), fd.get(), assign_ec);
              if (!assign_ec) fd.Release();  // the socket's now
            }
            self->OnAccept(assign_ec, std::move(socket));
            self->state_->RemovePending();
          });
      return;
    }
    acceptor_.async_accept(
        [self = shared_from_this()](const std::error_code& ec, asio::ip::tcp::socket socket) {
          self->OnAccept(ec, std::move(socket));
          self->state_->RemovePending();
        });
  }

  void Close() {
    std::error_code ignored;
    acceptor_.close(ignored);
    unix_acceptor_.close(ignored);
    retry_.cancel();
  }

 private:
  void OnAccept(const std::error_code& ec, asio::ip::tcp::socket socket) {
    if (state_->stopping() || ec == asio::error::operation_aborted) return;
    if (ec) {
      // EMFILE and friends: back off instead of spinning on a listener that stays readable.
      WarnRateLimited(absl::StrCat("accept failed: ", ec.message()));
      state_->AddPending();
      retry_.expires_after(std::chrono::milliseconds(50));
      retry_.async_wait([self = shared_from_this()](const std::error_code& wait_ec) {
        if (!wait_ec) self->Accept();
        self->state_->RemovePending();
      });
      return;
    }
    if (state_->options().on_connection) {
      state_->options().on_connection(kind_ == Kind::kHttp ? "http" : "socks5");
    }
    // Over a limit, a connection is still answered (503 / SOCKS5 failure, and a violation
    // naming its target) while few are; beyond that it is closed unread.
    const bool admit = state_->CanAdmit();
    if (!admit && !state_->CanRefuse()) {
      WarnRateLimited(absl::StrCat(state_->LimitReason(), "; closing new connections unread"));
      std::error_code ignored;
      socket.close(ignored);
    } else {
      if (!admit) WarnRateLimited(absl::StrCat(state_->LimitReason(), "; refusing new ones"));
      std::error_code ignored;
      socket.set_option(asio::ip::tcp::no_delay(true), ignored);
      if (kind_ == Kind::kHttp) {
        HttpProxyConnection::Start(state_, std::move(socket), /*over_limit=*/!admit);
      } else {
        Socks5ProxyConnection::Start(state_, std::move(socket), /*over_limit=*/!admit);
      }
    }
    Accept();
  }

  void WarnRateLimited(const std::string& message) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_warning_ < std::chrono::seconds(10)) return;
    last_warning_ = now;
    spdlog::warn("egress proxy: session={} {}", state_->options().session_id, message);
  }

  std::shared_ptr<SessionState> state_;
  const Kind kind_;
  asio::ip::tcp::acceptor acceptor_;
  asio::local::stream_protocol::acceptor unix_acceptor_;  // when given a Unix listener
  asio::steady_timer retry_;
  std::chrono::steady_clock::time_point last_warning_{};
};

SessionProxies::SessionProxies(EventLoop& loop, std::shared_ptr<SessionState> state,
                               std::shared_ptr<Listener> http, std::shared_ptr<Listener> socks)
    : loop_(loop), state_(std::move(state)), http_(std::move(http)), socks_(std::move(socks)) {}

absl::StatusOr<std::unique_ptr<SessionProxies>> SessionProxies::Start(
    EventLoop& loop, SessionProxiesOptions options) {
  UniqueFd http_fd = std::move(options.http_listen_fd);
  UniqueFd socks_fd = std::move(options.socks_listen_fd);
  const bool http_given = http_fd.valid();
  const bool socks_given = socks_fd.valid();
  if (options.allowlist == nullptr || options.resolver == nullptr) {
    return absl::InvalidArgumentError("SessionProxies needs an allowlist and a resolver");
  }
  if (loop.InLoopThread()) {
    return absl::FailedPreconditionError("SessionProxies::Start called on the event-loop thread");
  }
  const std::string session_id = options.session_id;
  const bool network = options.allowlist->network_enabled();
  const size_t entries = options.allowlist->AllowEntries().size();
  auto state = std::make_shared<SessionState>(loop.context(), std::move(options));
  auto http = std::make_shared<Listener>(state, Listener::Kind::kHttp);
  auto socks = std::make_shared<Listener>(state, Listener::Kind::kSocks5);
  absl::StatusOr<std::pair<uint16_t, uint16_t>> ports =
      loop.RunSync([&]() -> absl::StatusOr<std::pair<uint16_t, uint16_t>> {
        absl::StatusOr<uint16_t> http_port = http->Bind(std::move(http_fd));
        if (!http_port.ok()) {
          socks_fd.Reset();
          return http_port.status();
        }
        absl::StatusOr<uint16_t> socks_port = socks->Bind(std::move(socks_fd));
        if (!socks_port.ok()) {
          http->Close();
          return socks_port.status();
        }
        http->Accept();
        socks->Accept();
        return std::make_pair(*http_port, *socks_port);
      });
  if (!ports.ok()) {
    // Nothing is pending yet when binding fails, so the listeners simply go away.
    loop.RunSync([&] {
      http->Close();
      socks->Close();
      http.reset();
      socks.reset();
      state.reset();
    });
    return ports.status();
  }
  std::unique_ptr<SessionProxies> proxies(
      new SessionProxies(loop, std::move(state), std::move(http), std::move(socks)));
  proxies->http_port_ = ports->first;
  proxies->socks_port_ = ports->second;
  spdlog::info(
      "egress proxies started: session={} http={}:{} socks5={}:{} network={} allow_entries={}",
      session_id, http_given ? "given-fd" : "127.0.0.1", proxies->http_port_,
      socks_given ? "given-fd" : "127.0.0.1", proxies->socks_port_, network ? "on" : "off",
      entries);
  return proxies;
}

SessionProxies::~SessionProxies() { Stop(); }

std::string SessionProxies::http_proxy_url() const {
  return absl::StrCat("http://127.0.0.1:", http_port_);
}

std::string SessionProxies::socks_proxy_url() const {
  return absl::StrCat("socks5h://127.0.0.1:", socks_port_);
}

void SessionProxies::Stop() {
  if (stopped_) return;
  stopped_ = true;
  std::promise<void> drained;
  std::future<void> done = drained.get_future();
  auto begin = [this, &drained] {
    http_->Close();
    socks_->Close();
    state_->BeginStop(std::move(drained));
  };
  const std::string session_id = state_->options().session_id;
  if (loop_.InLoopThread()) {
    begin();  // cannot wait for the loop from inside it; everything is closed already
  } else {
    loop_.RunSync(begin);
    done.wait();
  }
  // The last references are released on the loop thread, where the objects live.
  if (!loop_.InLoopThread()) {
    loop_.RunSync([this] {
      http_.reset();
      socks_.reset();
      state_.reset();
    });
  }
  spdlog::info("egress proxies stopped: session={}", session_id);
}

size_t SessionProxies::open_connections() {
  if (state_ == nullptr) return 0;
  return loop_.RunSync([this] { return state_->open_children(); });
}

}  // namespace ccsandbox::proxy
