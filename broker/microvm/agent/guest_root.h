// The guest's root (docs/microvm.md, "The guest's root"): the agent builds /sysroot from the
// host's setup (broker/microvm/guest_setup.h) — a tmpfs root, the 9p shares, the symlinks, its
// own /proc, a minimal /dev, a private /tmp, then the deny-read masks and deny-write read-only
// binds, parents first — and every run enters it: chrooted there, with the capabilities that
// could undo the layout dropped and no way to regain them.
// Threat: the guest kernel enforces the deny sets; a workload that could mount, unmount,
// chroot, ptrace the agent or open files by handle could lift a mask, so it must not.
#ifndef CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_ROOT_H_
#define CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_ROOT_H_

#include <string>

#include "broker/microvm/guest_setup.h"

namespace ccsandbox::broker::microvm {

inline constexpr char kSysroot[] = "/sysroot";

// Builds /sysroot from `setup` (once). False and why when a step failed: the guest is then not
// fit to run anything.
bool BuildGuestRoot(const GuestSetup& setup, std::string* error);

// In a run's child, before exec: into /sysroot when `chroot_into` (a setup was applied), then
// the capabilities dropped (bounding, inheritable, permitted, effective, ambient) and
// PR_SET_NO_NEW_PRIVS set. False and why when any step failed: the run must not start.
bool EnterGuestRoot(bool chroot_into, std::string* error);

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_ROOT_H_
