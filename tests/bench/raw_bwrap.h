// The "raw bwrap" side of exec_bench: the bwrap command the launcher would run for
// Exec(["true"]) in a session with `spec`, rendered by the product's own policy code
// (BuildLaunchPlan + the broker's deny-path scan + RenderBwrapArgv over the real file system),
// with the same scrubbed environment. The bench starts it with posix_spawn.
#ifndef CCSANDBOX_TESTS_BENCH_RAW_BWRAP_H_
#define CCSANDBOX_TESTS_BENCH_RAW_BWRAP_H_

#include "absl/status/statusor.h"
#include "proto/sandbox.pb.h"
#include "tests/bench/bench_process.h"

namespace ccsandbox::bench {

// FAILED_PRECONDITION when bwrap is not on PATH.
absl::StatusOr<SpawnOptions> RawBwrapCommand(const v1::SandboxSpec& spec);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_RAW_BWRAP_H_
