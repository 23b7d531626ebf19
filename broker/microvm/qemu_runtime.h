// The microVM runtime with QEMU (docs/microvm.md, "The QEMU runtime"): one
// `qemu-system-x86_64 -M microvm` per session, no guest network device, the session image
// (scripts/microvm-image.sh: busybox, the virtio modules) with the in-guest agent appended,
// and the agent reached over a virtio-serial port bound to a Unix socket in the guest's own
// state directory. With `egress` set, a second port carries the guest's connections to the
// session's proxies (egress_bridge.h) and runs get the proxy environment of a native sandbox.
// Not yet: binds, deny sets in the guest (issue 20): Start refuses a spec that asks for binds
// rather than pretend. The guest's userland is the image's busybox.
#ifndef CCSANDBOX_BROKER_MICROVM_QEMU_RUNTIME_H_
#define CCSANDBOX_BROKER_MICROVM_QEMU_RUNTIME_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "broker/microvm/runtime.h"

namespace ccsandbox::broker::microvm {

// The session's proxies (EgressPlan's sockets): the guest's only way out.
struct QemuEgressSockets {
  std::string http_socket;
  std::string socks_socket;
};

struct QemuRuntimeConfig {
  std::string hypervisor;  // e.g. /usr/bin/qemu-system-x86_64
  std::string kernel;      // the guest kernel
  std::string image;       // the session image (agent-initrd.img), without the agent
  std::string agent;       // the static agent binary, appended to the image as /ccsandbox-agent
  std::string accel = "tcg";
  int memory_mib = 256;
  absl::Duration boot_timeout = absl::Seconds(30);  // qemu started to the agent's answer
  std::string state_root = "/tmp";  // each guest's files: a fresh directory under it
  // Unset: the guest has no egress port and no way out at all.
  std::optional<QemuEgressSockets> egress;
};

class QemuRuntime : public Runtime {
 public:
  explicit QemuRuntime(QemuRuntimeConfig config) : config_(std::move(config)) {}
  absl::StatusOr<std::unique_ptr<Guest>> Start(const v1::SandboxSpec& spec) override;

 private:
  QemuRuntimeConfig config_;
};

// The virtio-serial port's name the agent looks for.
inline constexpr char kAgentPortName[] = "org.ccsandbox.agent";

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_QEMU_RUNTIME_H_
