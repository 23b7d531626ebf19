// egress_bench figure 3, the broker's memory (VmRSS of sandbox_brokerd); prints and asserts
// nothing:
//   - per idle session: `sessions` Launches (after 5 warm-up Launch/Destroy), then all
//     destroyed again; descriptors per session too;
//   - per open tunnel: `tunnels` CONNECT tunnels held idle through the bridge by one sandboxed
//     client (which signals each stage through files in the work tree); the bridge's RSS too.
#ifndef CCSANDBOX_TESTS_BENCH_EGRESS_MEMORY_FIGURE_H_
#define CCSANDBOX_TESTS_BENCH_EGRESS_MEMORY_FIGURE_H_

#include "absl/status/status.h"
#include "tests/bench/egress_bench_session.h"

namespace ccsandbox::bench {

absl::Status FigureBrokerMemory(EgressBench& b, int sessions, int tunnels);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_EGRESS_MEMORY_FIGURE_H_
