#include "policy/plan/egress_wiring.h"

#include "absl/strings/str_cat.h"

namespace ccsandbox::policy {

std::vector<EgressBridge> EgressBridges() {
  return {{kSandboxLoopback, kSandboxHttpPort, kSandboxHttpSocket},
          {kSandboxLoopback, kSandboxSocksPort, kSandboxSocksSocket}};
}

std::map<std::string, std::string> ProxyEnvironment(const std::string& http_url,
                                                    const std::string& socks_url) {
  const std::string no_proxy = "localhost,127.0.0.1,::1";
  return {
      {"HTTP_PROXY", http_url},  {"HTTPS_PROXY", http_url}, {"http_proxy", http_url},
      {"https_proxy", http_url}, {"ALL_PROXY", socks_url},  {"all_proxy", socks_url},
      {"NO_PROXY", no_proxy},    {"no_proxy", no_proxy},    {"NODE_USE_ENV_PROXY", "1"},
  };
}

std::map<std::string, std::string> EgressEnvironment() {
  std::map<std::string, std::string> env =
      ProxyEnvironment(absl::StrCat("http://127.0.0.1:", kSandboxHttpPort),
                       absl::StrCat("socks5h://127.0.0.1:", kSandboxSocksPort));
  // ssh has no proxy variable: its ProxyCommand opens a CONNECT tunnel with socat.
  env["GIT_SSH_COMMAND"] = absl::StrCat(
      "ssh -o ProxyCommand='socat - PROXY:127.0.0.1:%h:%p,proxyport=", kSandboxHttpPort, "'");
  return env;
}

}  // namespace ccsandbox::policy
