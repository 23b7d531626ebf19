// exec_bench's time figures, each against the raw bwrap command (BenchSetup::raw) run in turn
// with ours, run by run:
//
//   A  warm path: one long-lived gRPC client, one Launch, then Exec(["true"]) N times; also
//      against a plain posix_spawn + waitpid of /bin/true in this process (fork-exec).
//   B  CLI path: `sandboxctl run -- true`, a new process each time.
//   C  sandboxctl start-up alone (probe against a missing socket, no RPC; no raw side).
//   D  diagnosis of A: the launcher's own SandboxProcess::Spawn + Supervise of the raw command
//      in this process (no RPC), and one unary RPC to the broker.
//   E  cold start: Launch of a session with A's spec; Destroy timed on its own line.
//
// Each prints median and p90 in ms and the ratios; a figure asserts nothing.
#ifndef CCSANDBOX_TESTS_BENCH_LATENCY_FIGURES_H_
#define CCSANDBOX_TESTS_BENCH_LATENCY_FIGURES_H_

#include "absl/status/status.h"
#include "tests/bench/bench_process.h"
#include "tests/bench/bench_setup.h"

namespace ccsandbox::bench {

absl::Status FigureWarm(const BenchSetup& setup, int runs);
absl::Status FigureCli(const BenchSetup& setup, const SpawnOptions& cli, int runs);
absl::Status FigureStartup(const BenchSetup& setup, const SpawnOptions& probe, int runs);
absl::Status FigureDiagnosis(const BenchSetup& setup, int runs);
absl::Status FigureLaunch(const BenchSetup& setup, int runs);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_LATENCY_FIGURES_H_
