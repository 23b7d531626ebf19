#include "policy/plan/egress_wiring.h"

#include "gtest/gtest.h"

namespace ccsandbox::policy {
namespace {

TEST(EgressEnvironment, PointsEveryClientAtTheBridgedPorts) {
  auto env = EgressEnvironment();
  EXPECT_EQ(env.at("HTTP_PROXY"), "http://127.0.0.1:3128");
  EXPECT_EQ(env.at("https_proxy"), "http://127.0.0.1:3128");
  EXPECT_EQ(env.at("ALL_PROXY"), "socks5h://127.0.0.1:1080");
  EXPECT_EQ(env.at("NO_PROXY"), "localhost,127.0.0.1,::1");
  EXPECT_EQ(env.at("NODE_USE_ENV_PROXY"), "1");
  EXPECT_EQ(env.at("GIT_SSH_COMMAND"),
            "ssh -o ProxyCommand='socat - PROXY:127.0.0.1:%h:%p,proxyport=3128'");
}

TEST(EgressBridges, BridgeTheSamePortsToTheBoundInSockets) {
  const std::vector<EgressBridge> bridges = EgressBridges();
  ASSERT_EQ(bridges.size(), 2u);
  EXPECT_EQ(bridges[0].listen_address, "127.0.0.1");
  EXPECT_EQ(bridges[0].listen_port, 3128);
  EXPECT_EQ(bridges[0].socket, "/run/ccsandbox/http.sock");
  EXPECT_EQ(bridges[1].listen_address, "127.0.0.1");
  EXPECT_EQ(bridges[1].listen_port, 1080);
  EXPECT_EQ(bridges[1].socket, "/run/ccsandbox/socks.sock");
}

}  // namespace
}  // namespace ccsandbox::policy
