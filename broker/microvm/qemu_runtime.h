// The microVM runtime with QEMU (docs/microvm.md, "The QEMU runtime"): one
// `qemu-system-x86_64 -M microvm` per session, no guest network device, the session image
// (scripts/microvm-image.sh: busybox, the virtio modules) with the in-guest agent appended,
// and the agent reached over a virtio-serial port bound to a Unix socket in the guest's own
// state directory. With a GuestLayout (guest_layout.h) the host's directories are shared over
// 9p and the agent builds the guest's root from them, deny sets included, before the guest is
// warm; every run is chrooted there. With GuestStart.egress a second port carries the guest's
// connections to the session's proxies (egress_bridge.h), its only way out, and runs get a
// native run's proxy environment. Without a layout Start refuses binds (the guest's userland is
// then the image's busybox).
#ifndef CCSANDBOX_BROKER_MICROVM_QEMU_RUNTIME_H_
#define CCSANDBOX_BROKER_MICROVM_QEMU_RUNTIME_H_

#include <atomic>
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
  // A guest whose agent leaves a question unanswered this long is hung (agent_liveness.h):
  // powered off and in error. Zero: never asked.
  absl::Duration answer_timeout = absl::Seconds(30);
  std::string state_root = "/tmp";  // each guest's files: a fresh directory under it
  // Guests booting or running at once, at most (each holds ~250 MiB and a share of a CPU);
  // one more Start is RESOURCE_EXHAUSTED. 0: no limit.
  int max_guests = 0;
};

class QemuRuntime : public Runtime {
 public:
  explicit QemuRuntime(QemuRuntimeConfig config)
      : config_(std::move(config)), live_(std::make_shared<std::atomic<int>>(0)) {}
  // With `start.layout`, its shares must cover the spec's binds (as strictly) and Start fails
  // UNAVAILABLE, leaving nothing running, when the agent could not build the guest's root;
  // without one, a spec with binds is refused and the guest's userland is the image's busybox.
  absl::StatusOr<std::unique_ptr<Guest>> Start(const GuestStart& start) override;
  std::vector<std::string> HostFiles() const override { return {config_.kernel}; }

 private:
  QemuRuntimeConfig config_;
  std::shared_ptr<std::atomic<int>> live_;  // guests started and not yet stopped (max_guests)
};

// The virtio-serial port's name the agent looks for.
inline constexpr char kAgentPortName[] = "org.ccsandbox.agent";

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_QEMU_RUNTIME_H_
