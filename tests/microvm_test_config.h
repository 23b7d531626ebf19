// The QEMU runtime's configuration for the tests that boot real guests: this host's qemu and
// the session image scripts/install-deps.sh builds (docs/microvm.md), under tcg (these hosts'
// KVM cannot run the guest).
#ifndef CCSANDBOX_TESTS_MICROVM_TEST_CONFIG_H_
#define CCSANDBOX_TESTS_MICROVM_TEST_CONFIG_H_

#include <string>

#include "broker/microvm/qemu_runtime.h"

namespace ccsandbox::testing {

inline constexpr char kMicrovmImageDir[] = "/var/cache/ccsandbox/microvm";
inline constexpr char kMicrovmQemu[] = "/usr/bin/qemu-system-x86_64";

// Guests' files under `state_root` (short: the agent's socket path must fit a sockaddr_un).
broker::microvm::QemuRuntimeConfig MicrovmTestConfig(const std::string& state_root);

// Why this host cannot boot the test guests (no qemu, no session image), or "".
std::string MissingMicrovmImage(const broker::microvm::QemuRuntimeConfig& config);

}  // namespace ccsandbox::testing

#endif  // CCSANDBOX_TESTS_MICROVM_TEST_CONFIG_H_
