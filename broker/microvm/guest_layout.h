// What a microVM guest sees of the host (docs/microvm.md, "The guest's root"), built from the
// session's LaunchPlan as the native backend builds its bwrap mount plan: the host's system
// directories read-only (symlinks recreated), the plan's mounts shared read-only or read-write
// over 9p, the deny-read paths hidden, the deny-write paths read-only, their ancestors pinned.
// Pure: the host is seen through a HostView; the agent applies the result (guest_setup.h).
// Threat: the guest kernel enforces the deny sets, so they must be in the layout the agent
// builds before any run — a share of a directory holding a secret exposes it otherwise.
#ifndef CCSANDBOX_BROKER_MICROVM_GUEST_LAYOUT_H_
#define CCSANDBOX_BROKER_MICROVM_GUEST_LAYOUT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/host_view.h"
#include "broker/microvm/guest_setup.h"
#include "proto/launcher.pb.h"

namespace ccsandbox::broker::microvm {

// One host directory shared into the guest over 9p (virtio-9p-device, mount tag "s<index>").
struct GuestShare {
  std::string host_path;
  std::string guest_path;
  bool read_only = true;
};

struct GuestSymlink {
  std::string guest_path;
  std::string target;  // as stored on the host
};

// A deny-set operation in the guest, applied after every share, parents first.
struct GuestGuard {
  SetupStep step;  // kMaskDir, kMaskFile, kPin or kReadOnly
  std::string guest_path;
};

struct GuestLayout {
  std::vector<GuestShare> shares;  // mount order; the first `system_shares` are the system base
  size_t system_shares = 0;        // /proc, /dev and /tmp are mounted after these
  std::vector<GuestSymlink> symlinks;
  std::vector<GuestGuard> guards;  // shallowest first
  std::string workdir;
};

// qemu 7.2's -M microvm has 24 virtio-mmio transports, but the guest never sees an interrupt
// from the last one (its pin 0 of the second IOAPIC; measured: a 9p mount there hangs), so 23
// are usable, and the agent's virtio-serial device takes one.
inline constexpr int kUsableVirtioMmioTransports = 23;
inline constexpr int kMaxGuestShares = kUsableVirtioMmioTransports - 1;

// The layout of `plan` (its mounts, deny sets and workdir) over `system_dirs` (e.g.
// policy::DefaultSystemRoDirs(): directories shared read-only, symlinks recreated, missing
// ones skipped). FAILED_PRECONDITION for a mount whose host path is not a directory (9p shares
// directories: a file mount cannot be shared) naming it, or for more than kMaxGuestShares
// shares; INVALID_ARGUMENT for a path that is not absolute and normalised.
absl::StatusOr<GuestLayout> GuestLayoutFromPlan(const v1::LaunchPlan& plan,
                                                const std::vector<std::string>& system_dirs,
                                                const HostView& host);

// The qemu arguments sharing the layout's directories: per share i
//   -fsdev local,id=fs<i>,path=<host path>,security_model=none[,readonly=on]
//   -device virtio-9p-device,fsdev=fs<i>,mount_tag=s<i>
// A comma in a path is doubled (qemu's escape), so a path never adds an option.
std::vector<std::string> ShareQemuArgs(const GuestLayout& layout);

// The setup the agent applies: the system shares (cached in the guest) and symlinks, the base
// (/proc, /dev, /tmp), the plan's shares, then the guards.
GuestSetup SetupOf(const GuestLayout& layout);

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_GUEST_LAYOUT_H_
