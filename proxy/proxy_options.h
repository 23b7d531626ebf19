// What a session's proxies are configured with, and what they report back.
#ifndef CCSANDBOX_PROXY_PROXY_OPTIONS_H_
#define CCSANDBOX_PROXY_PROXY_OPTIONS_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"
#include "policy/egress/allowlist.h"
#include "proxy/connection_budget.h"
#include "proxy/resolver.h"

namespace ccsandbox::proxy {

// One refused connection, ready to become a SandboxViolation event.
struct EgressViolation {
  std::string action = "network-outbound";
  std::string target;  // "host:port" ("[v6]:port"), normalised when the host parsed
  std::string raw;     // the reason, one line, as in the 403's X-Sandbox-Reason
};

// Called on the event-loop thread for every refusal of the session. Keep it short and
// non-blocking (queue the event); it must not call SessionProxies::Stop.
using ViolationCallback = std::function<void(const EgressViolation&)>;

struct ProxyTimeouts {
  // Request head / SOCKS5 negotiation must arrive within this (slow-loris clients).
  absl::Duration handshake = absl::Seconds(10);
  // Resolving and connecting upstream: past it, 504 / SOCKS5 0x04.
  absl::Duration connect = absl::Seconds(10);
  // A tunnel with no bytes either way for this long is closed.
  absl::Duration idle = absl::Minutes(10);
  // Once one side has finished sending, the other side has this long between bytes.
  absl::Duration half_open = absl::Seconds(60);
};

// Optional proxy credentials (HTTP Basic Proxy-Authorization / SOCKS5 RFC 1929). Without
// them any credentials a client sends are accepted and ignored: the listeners are on the
// host's loopback, so set them when other local users or sandboxes share that loopback
// (macOS) and put them in the proxy URLs handed to the sandbox.
struct ProxyCredentials {
  std::string username;
  std::string password;
};

struct SessionProxiesOptions {
  std::string session_id;  // for logs
  std::shared_ptr<const policy::EgressAllowlist> allowlist;
  std::shared_ptr<Resolver> resolver;  // shared by sessions; SystemResolver in production
  ViolationCallback on_violation;      // may be empty
  // Called on the event-loop thread for every client connection accepted, with "http" or
  // "socks5" (metrics); may be empty. Same rules as on_violation.
  std::function<void(absl::string_view proxy)> on_connection;
  ProxyTimeouts timeouts;
  std::optional<ProxyCredentials> credentials;
  // Open client connections (negotiating or tunnelling) per session, so one sandbox cannot
  // exhaust the broker's descriptors for every other session. A connection beyond it (or
  // beyond `budget`) is refused: HTTP 503 / SOCKS5 0x01 once its request is read, with a
  // network-outbound violation naming its target.
  size_t max_connections = 512;
  // Connections being refused that way at once; beyond these, new ones are closed unread.
  size_t max_refusing = 64;
  // Shared by every session on the loop: the cap of all their connections together. May be
  // null (no total cap).
  std::shared_ptr<ConnectionBudget> budget;
  // A session with fewer connections than this is served even when the budget is spent, so
  // greedy sessions that spend it do not cut every other session off (the broker's descriptor
  // reserve pays for these).
  size_t guaranteed_connections = 16;
  // Listening TCP sockets to serve instead of binding 127.0.0.1:0 — e.g. sockets the launcher
  // created inside the sandbox's network namespace, so the sandbox reaches its proxies with no
  // bridge process and no extra hop. SessionProxies takes them (and closes them when Start
  // fails); none binds a fresh 127.0.0.1 port.
  UniqueFd http_listen_fd;
  UniqueFd socks_listen_fd;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_PROXY_OPTIONS_H_
