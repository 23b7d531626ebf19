// egress_bench's traffic figures, over the ClientPaths (direct on the host first: the ratios
// are to it); they print and assert nothing.
//
//   1   bulk download: `mib` MiB per transfer for each client read size, `runs` rounds that
//       alternate the paths; best and median MB/s, their ratios, and the CPU seconds each end
//       spent
//   2a  tunnels opened per second by `clients` concurrent clients for `seconds` each (connect,
//       handshake, one byte each way, close); CPU as a share of wall time
//   2b  time to first byte: `ttfb_runs` sequential connect + handshake + 1 byte echoed; median,
//       p90, p99 and what the path adds to direct
#ifndef CCSANDBOX_TESTS_BENCH_EGRESS_TRAFFIC_FIGURES_H_
#define CCSANDBOX_TESTS_BENCH_EGRESS_TRAFFIC_FIGURES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tests/bench/egress_bench_session.h"

namespace ccsandbox::bench {

struct BulkOptions {
  int mib = 2048;
  int runs = 3;
  std::vector<std::string> read_kib = {"1024", "64"};
};
absl::Status FigureBulk(EgressBench& b, const std::vector<ClientPath>& paths,
                        const BulkOptions& options);

struct RateOptions {
  int clients = 16;
  double seconds = 3;
  int ttfb_runs = 2000;
};
absl::Status FigureRate(EgressBench& b, const std::vector<ClientPath>& paths,
                        const RateOptions& options);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_EGRESS_TRAFFIC_FIGURES_H_
