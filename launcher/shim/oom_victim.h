// Whom the OOM killer takes in a sandbox at its memory limit: the command and what it starts,
// never the sandbox's own processes (bwrap, a warm sandbox's init, the Exec reapers). The
// kernel takes the largest process in the memory cgroup; when what fills it belongs to no
// process — a file in the sandbox's /tmp, socket or pipe buffers — the largest was the init (a
// small command is no larger), and the whole session died of its command's allocation. So the
// command starts at the top of the scale (oom_score_adj 1000: raising it needs no privilege).
// A command that lowers itself again (down to 0, never below) can only make its own session
// the victim.
//
//   child, after fork, before the create guard and exec:  PreferAsOomVictim();
#ifndef CCSANDBOX_LAUNCHER_SHIM_OOM_VICTIM_H_
#define CCSANDBOX_LAUNCHER_SHIM_OOM_VICTIM_H_

namespace ccsandbox::launcher {

// Best effort (no /proc, nothing changes): the limit holds either way, only the choice of
// victim differs.
void PreferAsOomVictim();

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SHIM_OOM_VICTIM_H_
