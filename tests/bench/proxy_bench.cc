// proxy_bench: what the egress proxies cost, measured at the proxy on this machine. A program
// that prints figures, not a test: `bazel run -c opt //tests/bench:proxy_bench`.
//
// The upstream is a small Asio server in a forked child process (so its memory and threads are
// not counted), on 127.0.0.1; the proxies run in this process on one EventLoop, exactly as in
// the broker, with a resolver that answers bench.test -> 127.0.0.1. Figures:
//   1. bulk download: direct loopback vs a CONNECT tunnel vs SOCKS5 (MB/s, ratio to direct, best
//      and median of the runs), for a client reading 1 MiB at a time and for 64 KiB reads (a
//      typical client buffer), with the CPU seconds and context switches of the upstream, the
//      proxy loop and the client for each transfer; optionally reference relays measured the
//      same way (--relay_ports, e.g. socat), to tell the proxy's cost from the host's limits
//   2. tunnels opened per second with 16 concurrent clients (connect, CONNECT/SOCKS5
//      handshake, one byte each way, close), vs direct connections per second
//   3. added time to first byte: connect + handshake + one echoed byte, proxy minus direct
//   4. memory: RSS per idle session (200 sessions) and per open tunnel (1000 tunnels)
// Targets: >= 0.7x direct throughput, >= 5,000 tunnels/s, <= 1 MiB per idle
// session, <= 32 KiB per open tunnel. `--figures=13` picks figures; see --help for sizes.
//
// This file forks the upstream and starts the first session; the figures are in
// proxy_traffic_figures.h (1-3) and proxy_memory_figure.h (4).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "asio/ip/tcp.hpp"
#include "base/unique_fd.h"
#include "proxy/event_loop.h"
#include "proxy/session_proxies.h"
#include "spdlog/spdlog.h"
#include "tests/bench/bench_upstream.h"
#include "tests/bench/proxy_bench_client.h"
#include "tests/bench/proxy_bench_session.h"
#include "tests/bench/proxy_memory_figure.h"
#include "tests/bench/proxy_traffic_figures.h"

ABSL_FLAG(std::string, figures, "1234", "which figures to measure (digits 1-4)");
ABSL_FLAG(int, bulk_mib, 2048, "MiB per bulk transfer");
ABSL_FLAG(int, bulk_runs, 3, "bulk transfers per mode (best and median are reported)");
ABSL_FLAG(std::vector<std::string>, bulk_read_kib, std::vector<std::string>({"1024", "64"}),
          "client read sizes for the bulk figure, KiB (1024: a greedy reader; 64: a typical "
          "client buffer)");
ABSL_FLAG(std::vector<std::string>, bulk_modes,
          std::vector<std::string>({"direct", "http", "socks5"}),
          "modes for the bulk figure (a subset is for profiling one mode; ratios need direct)");
ABSL_FLAG(double, rate_seconds, 3.0, "seconds per connection-rate measurement");
ABSL_FLAG(int, rate_clients, 16, "concurrent clients for the connection rate");
ABSL_FLAG(int, ttfb_runs, 2000, "sequential connections for time to first byte");
ABSL_FLAG(int, idle_sessions, 200, "sessions for the idle-session memory figure");
ABSL_FLAG(int, open_tunnels, 1000, "tunnels for the per-tunnel memory figure");
ABSL_FLAG(bool, unix_clients, false,
          "serve the first session's proxies on Unix stream sockets handed to SessionProxies, as "
          "the broker does for a sandbox's bridge, and connect the proxy clients over them");
ABSL_FLAG(int, upstream_port, 0, "the upstream's port on 127.0.0.1 (0: ephemeral)");
ABSL_FLAG(std::vector<std::string>, relay_ports, {},
          "figure 1 also measures plain connections to these 127.0.0.1 ports, each expected to "
          "relay to the upstream (--upstream_port), e.g. `socat -b262144 "
          "TCP-LISTEN:9001,fork,reuseaddr TCP:127.0.0.1:9000`: a reference relay measured the "
          "same way, on the same cores");
ABSL_FLAG(std::vector<std::string>, relay_pids, {},
          "optional, one per --relay_ports entry: the relay's process, whose CPU time (all "
          "threads) is then shown in the proxy column");

namespace ccsandbox::bench {
namespace {

struct Upstream {
  pid_t pid = -1;
  uint16_t port = 0;
};

// The upstream (bench_upstream.h) in a child process on 127.0.0.1:`listen_port` (0: ephemeral),
// so its memory and threads are not counted; port 0 when it did not start.
Upstream ForkUpstream(uint16_t listen_port) {
  int ports[2];
  if (pipe(ports) != 0) return {};
  UniqueFd port_reader(ports[0]);
  UniqueFd port_writer(ports[1]);
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NAME, "bench-upstream");
    port_reader.Reset();
    asio::io_context context(1);
    asio::ip::tcp::acceptor acceptor(
        context, asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(), listen_port));
    acceptor.listen(4096);
    const uint16_t port = acceptor.local_endpoint().port();
    if (write(port_writer.get(), &port, sizeof(port)) != sizeof(port)) _exit(1);
    port_writer.Reset();
    ServeUpstream(acceptor);
    context.run();
    _exit(0);
  }
  port_writer.Reset();
  Upstream upstream;
  upstream.pid = pid;
  if (read(port_reader.get(), &upstream.port, sizeof(upstream.port)) != sizeof(upstream.port)) {
    upstream.port = 0;
  }
  return upstream;
}

ProxyBulkOptions BulkOptionsFromFlags() {
  ProxyBulkOptions options;
  options.mib = absl::GetFlag(FLAGS_bulk_mib);
  options.runs = absl::GetFlag(FLAGS_bulk_runs);
  options.read_kib = absl::GetFlag(FLAGS_bulk_read_kib);
  options.modes = absl::GetFlag(FLAGS_bulk_modes);
  for (const std::string& port : absl::GetFlag(FLAGS_relay_ports)) {
    options.relay_ports.push_back(static_cast<uint16_t>(std::stoul(port)));
  }
  for (const std::string& pid : absl::GetFlag(FLAGS_relay_pids)) {
    options.relay_pids.push_back(static_cast<pid_t>(std::stol(pid)));
  }
  return options;
}

int Main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // Before any thread: the upstream is a child process with its own memory.
  Upstream upstream = ForkUpstream(static_cast<uint16_t>(absl::GetFlag(FLAGS_upstream_port)));
  if (upstream.port == 0) {
    std::fprintf(stderr, "proxy_bench: cannot start the upstream\n");
    return 1;
  }
  spdlog::set_level(spdlog::level::warn);
  rlimit files;
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  std::printf("proxy_bench: upstream 127.0.0.1:%u (pid %d), %u CPUs, open files %llu\n",
              upstream.port, upstream.pid, std::thread::hardware_concurrency(),
              static_cast<unsigned long long>(files.rlim_cur));

  proxy::EventLoop loop;
  auto resolver = std::make_shared<BenchResolver>();
  std::string unix_dir;
  Target t;
  t.upstream = upstream.port;
  t.upstream_pid = upstream.pid;
  UniqueFd http_fd, socks_fd;
  if (absl::GetFlag(FLAGS_unix_clients)) {
    char dir[] = "/tmp/proxybench.XXXXXX";
    if (mkdtemp(dir) == nullptr) return 1;
    unix_dir = dir;
    t.http_unix = unix_dir + "/http.sock";
    t.socks_unix = unix_dir + "/socks.sock";
    http_fd = ListenUnix(t.http_unix);
    socks_fd = ListenUnix(t.socks_unix);
    if (!http_fd.valid() || !socks_fd.valid()) {
      std::fprintf(stderr, "proxy_bench: cannot listen in %s\n", dir);
      return 1;
    }
  }
  std::unique_ptr<proxy::SessionProxies> session =
      StartBenchSession(loop, resolver, upstream.port, 0, std::move(http_fd), std::move(socks_fd));
  t.http = session->http_port();
  t.socks = session->socks_port();

  const std::string figures = absl::GetFlag(FLAGS_figures);
  auto want = [&](char figure) { return figures.find(figure) != std::string::npos; };
  if (want('1')) FigureProxyBulk(t, BulkOptionsFromFlags());
  if (want('2')) {
    FigureProxyRate(t, absl::GetFlag(FLAGS_rate_clients), absl::GetFlag(FLAGS_rate_seconds));
  }
  if (want('3')) FigureProxyFirstByte(t, absl::GetFlag(FLAGS_ttfb_runs));
  if (want('4')) {
    FigureProxyMemory(loop, resolver, t, *session, absl::GetFlag(FLAGS_idle_sessions),
                      absl::GetFlag(FLAGS_open_tunnels));
  }

  session->Stop();
  if (!unix_dir.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(unix_dir, ignored);
  }
  kill(upstream.pid, SIGKILL);
  waitpid(upstream.pid, nullptr, 0);
  return 0;
}

}  // namespace
}  // namespace ccsandbox::bench

int main(int argc, char** argv) { return ccsandbox::bench::Main(argc, argv); }
