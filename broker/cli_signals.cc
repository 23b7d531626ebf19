#include "broker/cli_signals.h"

#include <signal.h>

#include <thread>

#include "absl/synchronization/mutex.h"

namespace ccsandbox::broker {
namespace {

struct State {
  absl::Mutex mu;
  std::function<void()> cancel ABSL_GUARDED_BY(mu);
  int signal ABSL_GUARDED_BY(mu) = 0;
};

State& GetState() {
  static State* const state = new State();
  return *state;
}

sigset_t StopSet() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
  return set;
}

// What the signal would have done without BlockCliStopSignals: its default action, here.
void DieBy(int sig) {
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(sig);
}

}  // namespace

void BlockCliStopSignals() {
  const sigset_t set = StopSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    while (true) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      State& state = GetState();
      absl::MutexLock lock(&state.mu);
      if (!state.cancel) {
        DieBy(sig);
        continue;
      }
      if (state.signal == 0) state.signal = sig;
      state.cancel();
    }
  }).detach();
}

CancelOnStopSignal::CancelOnStopSignal(std::function<void()> cancel) {
  State& state = GetState();
  absl::MutexLock lock(&state.mu);
  state.cancel = std::move(cancel);
  state.signal = 0;
}

CancelOnStopSignal::~CancelOnStopSignal() {
  State& state = GetState();
  absl::MutexLock lock(&state.mu);
  state.cancel = nullptr;
}

int CancelOnStopSignal::signal() const {
  State& state = GetState();
  absl::MutexLock lock(&state.mu);
  return state.signal;
}

}  // namespace ccsandbox::broker
