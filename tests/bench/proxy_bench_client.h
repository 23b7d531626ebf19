// proxy_bench's blocking clients: how one connection reaches the upstream — directly, through
// the session's HTTP proxy (CONNECT), through its SOCKS5 proxy (domain-name request), or through
// a reference relay outside the process — over TCP or the proxies' Unix sockets. Bench-only.
//
//   UniqueFd fd = Open(Mode::kHttpConnect, target);  // tunnel established, or invalid
//   OneRoundTrip(Mode::kSocks5, target);            // open, one byte each way, close
#ifndef CCSANDBOX_TESTS_BENCH_PROXY_BENCH_CLIENT_H_
#define CCSANDBOX_TESTS_BENCH_PROXY_BENCH_CLIENT_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/unique_fd.h"

namespace ccsandbox::bench {

// The name the bench's resolver answers with 127.0.0.1.
inline constexpr char kBenchHost[] = "bench.test";

// kRelay: a plain connection to a reference relay outside this process (--relay_ports).
enum class Mode { kDirect, kHttpConnect, kSocks5, kRelay };

// "direct", "http CONNECT", "socks5", "relay".
const char* ModeName(Mode mode);
// The mode's name in --bulk_modes: "direct", "http", "socks5", "relay".
const char* ModeFlagName(Mode mode);

// Where each mode connects.
struct Target {
  uint16_t upstream = 0;
  pid_t upstream_pid = 0;
  uint16_t http = 0;
  uint16_t socks = 0;
  uint16_t relay = 0;
  pid_t relay_pid = 0;
  std::string http_unix;  // --unix_clients: the proxies' socket paths
  std::string socks_unix;
};

// A connection to the upstream the way `mode` makes it (the proxy's handshake done); invalid
// on failure.
UniqueFd Open(Mode mode, const Target& t);

// One "tunnel": open, one byte each way ('E' echo), close.
bool OneRoundTrip(Mode mode, const Target& t);

// A listening Unix stream socket at `path`; invalid on failure.
UniqueFd ListenUnix(const std::string& path);

// The client's side of the handshakes, on a connected `fd` (also egress_bench_client's):
// reads a CONNECT response head — the upstream sends nothing before the client does, so the
// head arrives alone and is read in bulk, as real clients do — true on 200 and nothing after
// the head.
bool ReadConnectReply(int fd);
// SOCKS5 without authentication, CONNECT to the domain name `host`, greeting and request
// pipelined in one write; true when the proxy succeeded.
bool Socks5Connect(int fd, const std::string& host, uint16_t port);

bool SendAll(int fd, const void* data, size_t n);
bool SendAll(int fd, const std::string& s);
bool ReadExactly(int fd, char* out, size_t n);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_PROXY_BENCH_CLIENT_H_
