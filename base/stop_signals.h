// How both daemons stop: SIGINT, SIGTERM or SIGHUP, taken by one thread that waits for it, so
// shutdown is orderly (listeners stopped, runs cancelled, sockets removed) instead of a
// handler interrupting whatever thread the kernel picked.
//
//   int main() {
//     BlockStopSignals();  // before any thread starts: every thread inherits the mask
//     ... start gRPC, loops, pools ...
//     std::thread stopper([&] { int sig = WaitForStopSignal(); ... Shutdown(); });
//   }
#ifndef CCSANDBOX_BASE_STOP_SIGNALS_H_
#define CCSANDBOX_BASE_STOP_SIGNALS_H_

namespace ccsandbox {

// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread, and so in every thread it starts from
// now on, and ignores SIGPIPE (a write to a closed pipe or socket fails with EPIPE instead of
// killing the daemon). Call before any thread starts: a thread started earlier keeps its
// mask and could take the signal's default action (death) instead.
void BlockStopSignals();

// Waits until SIGINT, SIGTERM or SIGHUP arrives (blocked by BlockStopSignals) and returns it.
int WaitForStopSignal();

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_STOP_SIGNALS_H_
