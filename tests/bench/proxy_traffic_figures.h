// proxy_bench's traffic figures, measured at the proxies in this process against the forked
// upstream; they print and assert nothing:
//
//   1  bulk download: direct loopback vs a CONNECT tunnel vs SOCKS5 (MB/s, ratio to direct, best
//      and median of `runs` alternating rounds), for each client read size, with the CPU seconds
//      and context switches of the upstream, the proxy loop and the client for each transfer;
//      optionally reference relays measured the same way, to tell the proxy's cost from the
//      host's limits
//   2  tunnels opened per second by `clients` concurrent clients (connect, handshake, one byte
//      each way, close), vs direct connections per second
//   3  added time to first byte: connect + handshake + one echoed byte, proxy minus direct
#ifndef CCSANDBOX_TESTS_BENCH_PROXY_TRAFFIC_FIGURES_H_
#define CCSANDBOX_TESTS_BENCH_PROXY_TRAFFIC_FIGURES_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/bench/proxy_bench_client.h"

namespace ccsandbox::bench {

struct ProxyBulkOptions {
  int mib = 2048;
  int runs = 3;
  std::vector<std::string> read_kib = {"1024", "64"};
  std::vector<std::string> modes = {"direct", "http", "socks5"};  // ModeFlagName
  std::vector<uint16_t> relay_ports;  // reference relays to the upstream
  std::vector<pid_t> relay_pids;      // optional, one per relay port: whose CPU to show
};
void FigureProxyBulk(const Target& t, const ProxyBulkOptions& options);

void FigureProxyRate(const Target& t, int clients, double seconds);

void FigureProxyFirstByte(const Target& t, int runs);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_PROXY_TRAFFIC_FIGURES_H_
