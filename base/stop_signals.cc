#include "base/stop_signals.h"

#include <pthread.h>
#include <signal.h>

namespace ccsandbox {
namespace {

sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  // A terminal hang-up (or an operator's reload reflex) must not leave a stale socket behind.
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void BlockStopSignals() {
  signal(SIGPIPE, SIG_IGN);
  const sigset_t stop = StopSignals();
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
}

int WaitForStopSignal() {
  const sigset_t stop = StopSignals();
  int sig = 0;
  sigwait(&stop, &sig);
  return sig;
}

}  // namespace ccsandbox
