// The microVM runtime with QEMU (docs/microvm.md, "The QEMU runtime"): one
// `qemu-system-x86_64 -M microvm` per session, no guest network device, the session image
// (scripts/microvm-image.sh: busybox, the virtio modules) with the in-guest agent appended,
// and the agent reached over a virtio-serial port bound to a Unix socket in the guest's own
// state directory. With a GuestLayout (guest_layout.h) the host's directories are shared over
// 9p and the agent builds the guest's root from them, deny sets included, before the guest is
// warm; every run is chrooted there. Not yet: egress (issue 20): Start refuses a spec that asks
// for network rather than pretend, and without a layout it refuses binds (the guest's userland
// is then the image's busybox).
#ifndef CCSANDBOX_BROKER_MICROVM_QEMU_RUNTIME_H_
#define CCSANDBOX_BROKER_MICROVM_QEMU_RUNTIME_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "broker/microvm/guest_layout.h"
#include "broker/microvm/runtime.h"

namespace ccsandbox::broker::microvm {

struct QemuRuntimeConfig {
  std::string hypervisor;  // e.g. /usr/bin/qemu-system-x86_64
  std::string kernel;      // the guest kernel
  std::string image;       // the session image (agent-initrd.img), without the agent
  std::string agent;       // the static agent binary, appended to the image as /ccsandbox-agent
  std::string accel = "tcg";
  int memory_mib = 256;
  absl::Duration boot_timeout = absl::Seconds(30);  // qemu started to the agent's answer
  std::string state_root = "/tmp";  // each guest's files: a fresh directory under it
};

class QemuRuntime : public Runtime {
 public:
  explicit QemuRuntime(QemuRuntimeConfig config) : config_(std::move(config)) {}
  // Without a layout: the image's busybox only, a spec with binds refused.
  absl::StatusOr<std::unique_ptr<Guest>> Start(const v1::SandboxSpec& spec) override;
  // The guest's root is `layout` (its shares must cover the spec's binds, as strictly): Start
  // fails UNAVAILABLE, leaving nothing running, when the agent could not build it.
  absl::StatusOr<std::unique_ptr<Guest>> Start(const v1::SandboxSpec& spec,
                                               const GuestLayout& layout);

 private:
  absl::StatusOr<std::unique_ptr<Guest>> StartWith(const v1::SandboxSpec& spec,
                                                   const GuestLayout* layout);
  QemuRuntimeConfig config_;
};

// The virtio-serial port's name the agent looks for.
inline constexpr char kAgentPortName[] = "org.ccsandbox.agent";

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_QEMU_RUNTIME_H_
