// The init of a warm sandbox (sandbox_shim --init=FD): it lives as long as the session's
// sandbox, next to the egress bridge on the same event loop, and runs each Exec the launcher
// sends over FD (init_protocol.h) in a reaper of its own (reaper.h): kExec -> fork a reaper ->
// kStarted, kSignal -> the reaper, the reaper's end -> kEnded with the command's code.
//
//   asio::io_context io;  ... bridge ...
//   return RunInit(io, line->args.init_fd, line->args.create_guard);
//
// The init holds no capability and nothing of the host but the channel, the bridge's sockets
// and its stdio (bwrap's, read by the launcher); the command gets none of them, and cannot
// signal the init or its reaper (Landlock signal scoping). If a reaper dies other than by
// returning — killed — its processes could no longer be told from another Exec's, so the init
// ends the sandbox (exit 125, saying why on stderr) rather than keep tracking it wrongly. When
// the launcher closes the channel the init exits 0, and the sandbox's PID namespace ends every
// process in it.
#ifndef CCSANDBOX_LAUNCHER_SHIM_INIT_H_
#define CCSANDBOX_LAUNCHER_SHIM_INIT_H_

#include "asio.hpp"
#include "launcher/shim/shim_args.h"

namespace ccsandbox::launcher {

// Sends kReady, then serves the channel until it closes; returns the shim's exit code.
int RunInit(asio::io_context& io, int channel_fd, const CreateGuardShimConfig& guard);

}  // namespace ccsandbox::launcher

#endif  // CCSANDBOX_LAUNCHER_SHIM_INIT_H_
