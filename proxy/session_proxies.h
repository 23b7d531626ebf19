// A session's egress proxies: one HTTP proxy (CONNECT + absolute-form) and one SOCKS5 proxy,
// each on its own 127.0.0.1 ephemeral port, enforcing the session's EgressAllowlist. Every
// session's proxies run on the one shared EventLoop; no two sessions share a listener, a
// connection or a decision.
//
//   EventLoop loop;                                         // once per broker
//   auto resolver = std::make_shared<SystemResolver>();     // once per broker
//   SessionProxiesOptions options;
//   options.session_id = spec.session_id();
//   options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
//   options.resolver = resolver;
//   options.on_violation = [queue](const EgressViolation& v) { queue->Push(v); };
//   absl::StatusOr<std::unique_ptr<SessionProxies>> proxies =
//       SessionProxies::Start(loop, std::move(options));
//   env["HTTP_PROXY"] = (*proxies)->http_proxy_url();      // http://127.0.0.1:<http_port()>
//   env["ALL_PROXY"] = (*proxies)->socks_proxy_url();      // socks5h://127.0.0.1:<socks_port()>
//   ...
//   (*proxies)->Stop();  // at Destroy; also done by the destructor
//
// Listeners: by default each proxy binds its own 127.0.0.1:0. SessionProxiesOptions can hand
// in listening sockets instead (http_listen_fd / socks_listen_fd), e.g. ones the launcher made
// inside the sandbox's network namespace, so no bridge hop sits between the sandbox and us.
//
// Threads: Start and Stop are called from any thread except the loop's (they wait for it); the
// violation callback runs on the loop thread. The loop outlives every SessionProxies on it.
#ifndef CCSANDBOX_PROXY_SESSION_PROXIES_H_
#define CCSANDBOX_PROXY_SESSION_PROXIES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proxy/event_loop.h"
#include "proxy/proxy_options.h"

namespace ccsandbox::proxy {

class SessionState;
class Listener;

class SessionProxies {
 public:
  // Binds both listeners and starts accepting. INVALID_ARGUMENT without an allowlist or a
  // resolver; FAILED_PRECONDITION on the loop thread; UNAVAILABLE when a port cannot be bound.
  static absl::StatusOr<std::unique_ptr<SessionProxies>> Start(EventLoop& loop,
                                                               SessionProxiesOptions options);

  ~SessionProxies();  // Stop()
  SessionProxies(const SessionProxies&) = delete;
  SessionProxies& operator=(const SessionProxies&) = delete;

  uint16_t http_port() const { return http_port_; }
  uint16_t socks_port() const { return socks_port_; }
  std::string http_proxy_url() const;   // "http://127.0.0.1:<port>"
  std::string socks_proxy_url() const;  // "socks5h://127.0.0.1:<port>" (names resolve here)

  // Closes both listeners and every connection and tunnel of this session (peers see a
  // reset), and returns once all of them are freed. Idempotent.
  void Stop();

  // Connections and tunnels open right now (negotiating or relaying).
  size_t open_connections();

 private:
  SessionProxies(EventLoop& loop, std::shared_ptr<SessionState> state,
                 std::shared_ptr<Listener> http, std::shared_ptr<Listener> socks);

  EventLoop& loop_;
  std::shared_ptr<SessionState> state_;
  std::shared_ptr<Listener> http_;
  std::shared_ptr<Listener> socks_;
  uint16_t http_port_ = 0;
  uint16_t socks_port_ = 0;
  bool stopped_ = false;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_SESSION_PROXIES_H_
