// The loopback ports a sandbox's clients reach the session's proxies on: the native shim's
// bridge and the microVM guest's agent listen on these, and EgressEnvironment points clients
// at them. Header-only, no dependencies: the static in-guest agent includes it.
#ifndef CCSANDBOX_POLICY_PLAN_EGRESS_PORTS_H_
#define CCSANDBOX_POLICY_PLAN_EGRESS_PORTS_H_

#include <cstdint>

namespace ccsandbox::policy {

inline constexpr char kSandboxLoopback[] = "127.0.0.1";
inline constexpr uint16_t kSandboxHttpPort = 3128;
inline constexpr uint16_t kSandboxSocksPort = 1080;

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_EGRESS_PORTS_H_
