#include "policy/plan/egress_wiring.h"

#include "absl/strings/str_cat.h"

namespace ccsandbox::policy {

std::vector<EgressBridge> EgressBridges() {
  return {{kSandboxLoopback, kSandboxHttpPort, kSandboxHttpSocket},
          {kSandboxLoopback, kSandboxSocksPort, kSandboxSocksSocket}};
}

std::map<std::string, std::string> EgressEnvironment() {
  const std::string http = absl::StrCat("http://127.0.0.1:", kSandboxHttpPort);
  const std::string socks = absl::StrCat("socks5h://127.0.0.1:", kSandboxSocksPort);
  const std::string no_proxy = "localhost,127.0.0.1,::1";
  return {
      {"HTTP_PROXY", http},
      {"HTTPS_PROXY", http},
      {"http_proxy", http},
      {"https_proxy", http},
      {"ALL_PROXY", socks},
      {"all_proxy", socks},
      {"NO_PROXY", no_proxy},
      {"no_proxy", no_proxy},
      {"NODE_USE_ENV_PROXY", "1"},
      // ssh has no proxy variable: its ProxyCommand opens a CONNECT tunnel with socat.
      {"GIT_SSH_COMMAND",
       absl::StrCat(
           "ssh -o ProxyCommand='socat - PROXY:127.0.0.1:%h:%p,proxyport=", kSandboxHttpPort, "'")},
  };
}

}  // namespace ccsandbox::policy
