// How every workload process starts in the guest, a run's and a terminal's alike: forked from
// the agent, its stdio wired by the caller, then into the guest's root with the capabilities
// dropped (guest_root.h: EnterGuestRoot), its working directory, and exec. The child reports
// why it could not start over a close-on-exec pipe, so the caller learns it before anything
// runs.
#ifndef CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_SPAWN_H_
#define CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_SPAWN_H_

#include <sys/types.h>

#include <functional>
#include <string>

#include "broker/microvm/agent_frame.h"
#include "broker/microvm/guest_setup.h"

namespace ccsandbox::broker::microvm {

// Forks; in the child, `wire_stdio` runs first (setsid, dup2s, a controlling terminal), then the
// child enters `root` (null: no setup was applied, the initramfs with capabilities dropped),
// changes to the request's workdir (else the root's), and execs argv with the request's env
// (PATH=/bin when it has none). The child's pid, or -1 and why (fork, entering the root, chdir,
// exec); a child that failed is reaped.
pid_t SpawnInGuest(const ExecRequest& request, const GuestSetup* root,
                   const std::function<void()>& wire_stdio, std::string* error);

// All of `bytes` to `fd` (blocking), or as much as it takes before an error.
void WriteAll(int fd, const std::string& bytes);

}  // namespace ccsandbox::broker::microvm

#endif  // CCSANDBOX_BROKER_MICROVM_AGENT_GUEST_SPAWN_H_
