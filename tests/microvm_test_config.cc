#include "tests/microvm_test_config.h"

#include "absl/strings/str_cat.h"
#include "tests/daemon_fixture.h"

namespace ccsandbox::testing {

broker::microvm::QemuRuntimeConfig MicrovmTestConfig(const std::string& state_root) {
  broker::microvm::QemuRuntimeConfig config;
  config.hypervisor = kMicrovmQemu;
  config.kernel = absl::StrCat(kMicrovmImageDir, "/vmlinuz");
  config.image = absl::StrCat(kMicrovmImageDir, "/agent-initrd.img");
  config.agent = Runfile("broker/microvm/agent/ccsandbox_agent");
  config.accel = "tcg";
  config.state_root = state_root;
  return config;
}

std::string MissingMicrovmImage(const broker::microvm::QemuRuntimeConfig& config) {
  if (PathExists(config.hypervisor) && PathExists(config.kernel) && PathExists(config.image)) {
    return "";
  }
  return absl::StrCat("no qemu or session image in ", kMicrovmImageDir,
                      " (scripts/install-deps.sh builds it)");
}

}  // namespace ccsandbox::testing
