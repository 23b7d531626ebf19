// How a native sandbox reaches its session's proxies: the proxies' Unix sockets are bound
// in at fixed paths, the shim bridges fixed loopback ports to them inside the sandbox's own
// network namespace, and the command's environment points every client at those ports.
// Nothing else leaves the namespace.
#ifndef CCSANDBOX_POLICY_PLAN_EGRESS_WIRING_H_
#define CCSANDBOX_POLICY_PLAN_EGRESS_WIRING_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "policy/plan/egress_ports.h"

namespace ccsandbox::policy {

inline constexpr char kSandboxRunDir[] = "/run/ccsandbox";
inline constexpr char kSandboxShimPath[] = "/run/ccsandbox/shim";
inline constexpr char kSandboxHttpSocket[] = "/run/ccsandbox/http.sock";
inline constexpr char kSandboxSocksSocket[] = "/run/ccsandbox/socks.sock";

// What the shim bridges: each loopback port the environment points clients at, to the proxy
// socket bound in for it (the launcher renders them as the shim's --bridge arguments).
struct EgressBridge {
  std::string listen_address;
  uint16_t listen_port = 0;
  std::string socket;
};
std::vector<EgressBridge> EgressBridges();

// HTTP_PROXY/HTTPS_PROXY (and lowercase) -> the HTTP proxy, ALL_PROXY -> SOCKS5 with remote
// name resolution, NO_PROXY for loopback, GIT_SSH_COMMAND tunnelling ssh through the HTTP
// proxy's CONNECT with socat, NODE_USE_ENV_PROXY=1 so Node's fetch honours them.
std::map<std::string, std::string> EgressEnvironment();

// The proxy variables alone (HTTP_PROXY/HTTPS_PROXY and lowercase, ALL_PROXY, NO_PROXY,
// NODE_USE_ENV_PROXY) for proxies at these URLs: EgressEnvironment's, and macOS's, whose
// proxies are on the host's loopback ports with the session's credentials in the URLs.
std::map<std::string, std::string> ProxyEnvironment(const std::string& http_url,
                                                    const std::string& socks_url);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_EGRESS_WIRING_H_
