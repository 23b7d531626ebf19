// What every exec_bench figure works against: the running daemons, a client of the broker, the
// session spec all figures launch, and the raw bwrap command they compare with.
#ifndef CCSANDBOX_TESTS_BENCH_BENCH_SETUP_H_
#define CCSANDBOX_TESTS_BENCH_BENCH_SETUP_H_

#include <sys/types.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "proto/sandbox.grpc.pb.h"
#include "proto/sandbox.pb.h"
#include "tests/bench/bench_process.h"

namespace ccsandbox::bench {

struct BenchSetup {
  v1::SandboxBroker::Stub* stub = nullptr;
  v1::SandboxSpec spec;  // A's session; other figures launch copies under other ids
  SpawnOptions raw;      // raw bwrap running `true` in that spec
  pid_t launcher_pid = -1;
  pid_t broker_pid = -1;
  int warmup = 0;  // unmeasured runs of each kind before each figure

  // `spec` under the session id "<spec's id>-<suffix>".
  v1::SandboxSpec SpecNamed(const std::string& suffix) const {
    v1::SandboxSpec copy = spec;
    copy.set_session_id(absl::StrCat(spec.session_id(), "-", suffix));
    return copy;
  }
};

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_BENCH_SETUP_H_
