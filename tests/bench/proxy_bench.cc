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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/marshalling.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "asio/ip/tcp.hpp"
#include "asio/post.hpp"
#include "asio/read.hpp"
#include "asio/write.hpp"
#include "base/unique_fd.h"
#include "policy/egress/allowlist.h"
#include "proxy/event_loop.h"
#include "proxy/resolver.h"
#include "proxy/session_proxies.h"
#include "spdlog/spdlog.h"
#include "tests/bench/bench_upstream.h"

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

namespace {

using Clock = std::chrono::steady_clock;
using ccsandbox::proxy::EventLoop;
using ccsandbox::proxy::Resolver;
using ccsandbox::proxy::SessionProxies;
using ccsandbox::proxy::SessionProxiesOptions;

// ---- The upstream, in a child process ----

struct Upstream {
  pid_t pid = -1;
  uint16_t port = 0;
};

Upstream ForkUpstream(uint16_t listen_port) {
  int ports[2];
  if (pipe(ports) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NAME, "bench-upstream");
    close(ports[0]);
    asio::io_context context(1);
    asio::ip::tcp::acceptor acceptor(
        context, asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(), listen_port));
    acceptor.listen(4096);
    const uint16_t port = acceptor.local_endpoint().port();
    if (write(ports[1], &port, sizeof(port)) != sizeof(port)) _exit(1);
    close(ports[1]);
    ccsandbox::bench::ServeUpstream(acceptor);
    context.run();
    _exit(0);
  }
  close(ports[1]);
  Upstream upstream;
  upstream.pid = pid;
  if (read(ports[0], &upstream.port, sizeof(upstream.port)) != sizeof(upstream.port)) {
    upstream.port = 0;
  }
  close(ports[0]);
  return upstream;
}

// ---- Blocking client helpers ----

int Connect(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int ConnectUnix(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, sizeof(a.sun_path) - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A listening Unix stream socket at `path`; -1 on failure.
int ListenUnix(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, sizeof(a.sun_path) - 1);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd, 4096) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool SendAll(int fd, const std::string& s) { return SendAll(fd, s.data(), s.size()); }

bool ReadExactly(int fd, char* out, size_t n) {
  while (n > 0) {
    const ssize_t r = read(fd, out, n);
    if (r <= 0) return false;
    out += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// Reads a CONNECT response head. The upstream sends nothing before the client does, so the
// head arrives alone and can be read in bulk, as real clients do; true on 200.
bool ReadConnectReply(int fd) {
  char head[1024];
  size_t got = 0;
  while (got < sizeof(head)) {
    const ssize_t n = read(fd, head + got, sizeof(head) - got);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
    const std::string_view view(head, got);
    if (view.find("\r\n\r\n") != std::string_view::npos) {
      return view.rfind("HTTP/1.1 200", 0) == 0 && view.find("\r\n\r\n") + 4 == got;
    }
  }
  return false;
}

bool Socks5Connect(int fd, const std::string& host, uint16_t port) {
  std::string greeting("\x05\x01\x00", 3);
  std::string request = {5, 1, 0, 3, static_cast<char>(host.size())};
  request += host;
  request.push_back(static_cast<char>(port >> 8));
  request.push_back(static_cast<char>(port & 0xff));
  // Pipelined as fast clients do: greeting and request in one write.
  if (!SendAll(fd, greeting + request)) return false;
  char reply[12];  // method selection + a reply with an IPv4 bound address
  return ReadExactly(fd, reply, sizeof(reply)) && reply[1] == 0 && reply[3] == 0;
}

// kRelay: a plain connection to a reference relay outside this process (--relay_ports).
enum class Mode { kDirect, kHttpConnect, kSocks5, kRelay };

const char* Name(Mode mode) {
  switch (mode) {
    case Mode::kDirect:
      return "direct";
    case Mode::kHttpConnect:
      return "http CONNECT";
    case Mode::kSocks5:
      return "socks5";
    case Mode::kRelay:
      return "relay";
  }
  return "";
}

// The mode's name in --bulk_modes.
const char* FlagName(Mode mode) {
  switch (mode) {
    case Mode::kDirect:
      return "direct";
    case Mode::kHttpConnect:
      return "http";
    case Mode::kSocks5:
      return "socks5";
    case Mode::kRelay:
      return "relay";
  }
  return "";
}

struct Target {
  uint16_t upstream = 0;
  uint16_t http = 0;
  uint16_t socks = 0;
  uint16_t relay = 0;
  pid_t relay_pid = 0;
  std::string http_unix;  // --unix_clients: the proxies' socket paths
  std::string socks_unix;
};

// Opens a connection to the upstream the way `mode` does; -1 on failure.
int Open(Mode mode, const Target& t) {
  if (mode == Mode::kDirect) return Connect(t.upstream);
  if (mode == Mode::kRelay) return Connect(t.relay);
  const std::string& unix_path = mode == Mode::kHttpConnect ? t.http_unix : t.socks_unix;
  const int fd = !unix_path.empty() ? ConnectUnix(unix_path)
                                    : Connect(mode == Mode::kHttpConnect ? t.http : t.socks);
  if (fd < 0) return -1;
  bool ok;
  if (mode == Mode::kHttpConnect) {
    ok = SendAll(fd, absl::StrCat("CONNECT bench.test:", t.upstream,
                                  " HTTP/1.1\r\nHost: bench.test:", t.upstream, "\r\n\r\n")) &&
         ReadConnectReply(fd);
  } else {
    ok = Socks5Connect(fd, "bench.test", t.upstream);
  }
  if (!ok) {
    close(fd);
    return -1;
  }
  return fd;
}

// ---- Figures ----

// CPU seconds (user + system) of a task from /proc/<path>/stat.
double CpuSeconds(const std::string& stat_path) {
  std::ifstream in(stat_path);
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close_paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Context switches (voluntary + involuntary) of a task from /proc/<path>/status: how often it
// slept or was preempted, i.e. the wakeups a transfer cost.
long ContextSwitches(const std::string& status_path) {
  std::ifstream in(status_path);
  std::string line;
  long total = 0;
  while (std::getline(in, line)) {
    if (line.find("ctxt_switches:") != std::string::npos) {
      total += std::stol(line.substr(line.find(':') + 1));
    }
  }
  return total;
}

std::string StatusOf(const std::string& stat_path) {
  return stat_path.empty() ? "" : stat_path.substr(0, stat_path.size() - 4) + "status";
}

std::string LoopThreadStat() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name == "egress-loop") return (entry.path() / "stat").string();
  }
  return "";
}

struct Cpu {
  double upstream = 0, proxy = 0, client = 0;
};
Cpu g_last_cpu;
pid_t g_upstream_pid = 0;

double BulkMBps(Mode mode, const Target& t, uint64_t bytes, size_t read_size) {
  const std::string upstream_stat = absl::StrCat("/proc/", g_upstream_pid, "/stat");
  std::string loop_stat = LoopThreadStat();
  if (mode == Mode::kRelay) {
    loop_stat = t.relay_pid > 0 ? absl::StrCat("/proc/", t.relay_pid, "/stat") : "";
  }
  const std::string client_stat = absl::StrCat("/proc/self/task/", gettid(), "/stat");
  const Cpu before{CpuSeconds(upstream_stat), CpuSeconds(loop_stat), CpuSeconds(client_stat)};
  // A relay's /proc/<pid>/status counts its main thread only: not shown.
  const std::string loop_status = mode == Mode::kRelay ? "" : StatusOf(loop_stat);
  const long switches_before[3] = {ContextSwitches(StatusOf(upstream_stat)),
                                   ContextSwitches(loop_status),
                                   ContextSwitches(StatusOf(client_stat))};
  const int fd = Open(mode, t);
  if (fd < 0) return 0;
  std::string request = "S";
  for (int shift = 56; shift >= 0; shift -= 8) request.push_back(static_cast<char>(bytes >> shift));
  std::vector<char> buf(read_size);
  const auto start = Clock::now();
  SendAll(fd, request);
  uint64_t got = 0;
  while (got < bytes) {
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n <= 0) break;
    got += static_cast<uint64_t>(n);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  close(fd);
  g_last_cpu = {CpuSeconds(upstream_stat) - before.upstream, CpuSeconds(loop_stat) - before.proxy,
                CpuSeconds(client_stat) - before.client};
  const long switches[3] = {ContextSwitches(StatusOf(upstream_stat)) - switches_before[0],
                            ContextSwitches(loop_status) - switches_before[1],
                            ContextSwitches(StatusOf(client_stat)) - switches_before[2]};
  std::printf(
      "     %-13s %6.0f MB/s  cpu s: upstream %.2f proxy %.2f client %.2f, "
      "wall %.2f; context switches: upstream %ld proxy %ld client %ld\n",
      Name(mode), static_cast<double>(bytes) / 1e6 / seconds, g_last_cpu.upstream, g_last_cpu.proxy,
      g_last_cpu.client, seconds, switches[0], switches[1], switches[2]);
  if (got != bytes) {
    std::printf("  (%s: short transfer %llu of %llu bytes)\n", Name(mode),
                static_cast<unsigned long long>(got), static_cast<unsigned long long>(bytes));
    return 0;
  }
  return static_cast<double>(bytes) / 1e6 / seconds;
}

struct Spread {
  double best = 0;
  double median = 0;
};

Spread SpreadOf(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return {samples.back(), n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2};
}

// One "tunnel": open, one byte each way, close.
bool OneRoundTrip(Mode mode, const Target& t) {
  const int fd = Open(mode, t);
  if (fd < 0) return false;
  char c = 0;
  const bool ok = SendAll(fd, "Ex", 2) && ReadExactly(fd, &c, 1) && c == 'x';
  close(fd);
  return ok;
}

struct Rate {
  double per_second = 0;
  long failures = 0;
};

Rate ConnectionRate(Mode mode, const Target& t, int clients, double seconds) {
  std::atomic<long> done{0};
  std::atomic<long> failed{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        if (OneRoundTrip(mode, t)) {
          done.fetch_add(1, std::memory_order_relaxed);
        } else {
          failed.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& thread : threads) thread.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  return {static_cast<double>(done.load()) / elapsed, failed.load()};
}

struct Latency {
  double median_us = 0;
  double p99_us = 0;
};

Latency TimeToFirstByte(Mode mode, const Target& t, int runs) {
  std::vector<double> samples;
  samples.reserve(runs);
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    if (!OneRoundTrip(mode, t)) continue;
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  return {samples[samples.size() / 2],
          samples[std::min(samples.size() - 1, samples.size() * 99 / 100)]};
}

long OpenFds() {
  long count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++count;
  }
  return count;
}

// "TCP: inuse .. mem N" in /proc/net/sockstat: pages held by TCP socket buffers, machine-wide.
long TcpSocketPages() {
  std::ifstream in("/proc/net/sockstat");
  std::string word;
  bool tcp = false;
  while (in >> word) {
    if (word == "TCP:") tcp = true;
    if (tcp && word == "mem") {
      long pages = 0;
      in >> pages;
      return pages;
    }
  }
  return 0;
}

long RssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

class BenchResolver : public Resolver {
 public:
  void Resolve(const std::string& host, asio::any_io_executor executor, Callback done) override {
    absl::StatusOr<Addresses> result =
        host == "bench.test"
            ? absl::StatusOr<Addresses>(Addresses{asio::ip::address_v4::loopback()})
            : absl::NotFoundError(host);
    asio::post(executor, [done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  }
};

std::unique_ptr<SessionProxies> StartSession(EventLoop& loop, std::shared_ptr<Resolver> resolver,
                                             uint16_t upstream_port, int index,
                                             int http_listen_fd = -1, int socks_listen_fd = -1) {
  auto list = ccsandbox::policy::EgressAllowlist::Resolve(
      true, std::vector<std::string>{absl::StrCat("bench.test:", upstream_port)});
  SessionProxiesOptions options;
  options.session_id = absl::StrCat("bench-", index);
  options.allowlist = std::make_shared<const ccsandbox::policy::EgressAllowlist>(*std::move(list));
  options.resolver = std::move(resolver);
  options.max_connections = 1 << 20;
  options.http_listen_fd = ccsandbox::UniqueFd(http_listen_fd);  // -1: none
  options.socks_listen_fd = ccsandbox::UniqueFd(socks_listen_fd);
  auto proxies = SessionProxies::Start(loop, std::move(options));
  if (!proxies.ok()) {
    std::fprintf(stderr, "start: %s\n", std::string(proxies.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(proxies);
}

}  // namespace

int main(int argc, char** argv) {
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

  g_upstream_pid = upstream.pid;
  EventLoop loop;
  auto resolver = std::make_shared<BenchResolver>();
  std::string unix_dir;
  Target t;
  int http_fd = -1, socks_fd = -1;
  if (absl::GetFlag(FLAGS_unix_clients)) {
    char dir[] = "/tmp/proxybench.XXXXXX";
    if (mkdtemp(dir) == nullptr) return 1;
    unix_dir = dir;
    t.http_unix = unix_dir + "/http.sock";
    t.socks_unix = unix_dir + "/socks.sock";
    http_fd = ListenUnix(t.http_unix);
    socks_fd = ListenUnix(t.socks_unix);
    if (http_fd < 0 || socks_fd < 0) {
      std::fprintf(stderr, "proxy_bench: cannot listen in %s\n", dir);
      return 1;
    }
  }
  std::unique_ptr<SessionProxies> session =
      StartSession(loop, resolver, upstream.port, 0, http_fd, socks_fd);
  t.upstream = upstream.port;
  t.http = session->http_port();
  t.socks = session->socks_port();

  const std::string figures = absl::GetFlag(FLAGS_figures);
  auto want = [&](char figure) { return figures.find(figure) != std::string::npos; };

  // 1. Bulk throughput.
  if (want('1')) {
    const std::vector<std::string> modes = absl::GetFlag(FLAGS_bulk_modes);
    auto bulk_mode = [&](Mode mode) {
      return std::find(modes.begin(), modes.end(), FlagName(mode)) != modes.end();
    };
    const std::vector<std::string> relay_pids = absl::GetFlag(FLAGS_relay_pids);
    std::vector<uint16_t> relay_ports;
    for (const std::string& port : absl::GetFlag(FLAGS_relay_ports)) {
      relay_ports.push_back(static_cast<uint16_t>(std::stoul(port)));
    }
    const uint64_t bytes = static_cast<uint64_t>(absl::GetFlag(FLAGS_bulk_mib)) << 20;
    for (const std::string& kib : absl::GetFlag(FLAGS_bulk_read_kib)) {
      const size_t read_size = static_cast<size_t>(std::stoul(kib)) << 10;
      std::printf(
          "\n1. bulk download, %d MiB, client reads of %s KiB, %d runs each, alternating "
          "(MB/s)\n",
          absl::GetFlag(FLAGS_bulk_mib), kib.c_str(), absl::GetFlag(FLAGS_bulk_runs));
      // One row per path: direct, http CONNECT, socks5, then the reference relays.
      std::vector<std::vector<double>> runs(3 + relay_ports.size());
      for (int run = 0; run < absl::GetFlag(FLAGS_bulk_runs); ++run) {
        for (Mode mode : {Mode::kDirect, Mode::kHttpConnect, Mode::kSocks5}) {
          if (bulk_mode(mode)) {
            runs[static_cast<int>(mode)].push_back(BulkMBps(mode, t, bytes, read_size));
          }
        }
        for (size_t i = 0; i < relay_ports.size(); ++i) {
          Target relay = t;
          relay.relay = relay_ports[i];
          if (i < relay_pids.size()) relay.relay_pid = static_cast<pid_t>(std::stol(relay_pids[i]));
          runs[3 + i].push_back(BulkMBps(Mode::kRelay, relay, bytes, read_size));
        }
      }
      // Loopback throughput on a shared 2-core host swings between runs (which thread shares a
      // core with which): the median is the figure to trust, the best shows the spread.
      const Spread direct = SpreadOf(runs[0]);
      std::printf("   %-13s best %6.0f            median %6.0f\n", "direct", direct.best,
                  direct.median);
      for (size_t row = 1; row < runs.size(); ++row) {
        const Spread s = SpreadOf(runs[row]);
        const std::string name =
            row < 3 ? Name(static_cast<Mode>(row)) : absl::StrCat("relay :", relay_ports[row - 3]);
        std::printf("   %-13s best %6.0f (%.2fx)    median %6.0f (%.2fx)   %s\n", name.c_str(),
                    s.best, s.best / direct.best, s.median, s.median / direct.median,
                    row < 3 ? "(target >= 0.70x direct)" : "(reference relay, not ours)");
      }
    }
  }

  // 2. Connection rate.
  if (want('2')) {
    const int clients = absl::GetFlag(FLAGS_rate_clients);
    const double seconds = absl::GetFlag(FLAGS_rate_seconds);
    std::printf("\n2. connections per second, %d concurrent clients, %.1f s each\n", clients,
                seconds);
    Rate direct_rate;
    for (Mode mode : {Mode::kDirect, Mode::kHttpConnect, Mode::kSocks5}) {
      const Rate rate = ConnectionRate(mode, t, clients, seconds);
      if (mode == Mode::kDirect) direct_rate = rate;
      std::printf("   %-13s %8.0f /s", Name(mode), rate.per_second);
      if (mode != Mode::kDirect) {
        std::printf("   %.2fx direct   (target >= 5,000 tunnels/s)",
                    rate.per_second / direct_rate.per_second);
      }
      std::printf("%s\n",
                  rate.failures ? absl::StrCat("   failures: ", rate.failures).c_str() : "");
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }

  // 3. Added time to first byte.
  if (want('3')) {
    const int runs = absl::GetFlag(FLAGS_ttfb_runs);
    std::printf(
        "\n3. time to first byte: connect + handshake + 1 byte echoed, %d "
        "sequential runs\n",
        runs);
    const Latency direct_latency = TimeToFirstByte(Mode::kDirect, t, runs);
    std::printf("   direct        median %7.1f us   p99 %7.1f us\n", direct_latency.median_us,
                direct_latency.p99_us);
    for (Mode mode : {Mode::kHttpConnect, Mode::kSocks5}) {
      const Latency l = TimeToFirstByte(mode, t, runs);
      std::printf("   %-13s median %7.1f us   p99 %7.1f us   added %+.1f us (median)\n", Name(mode),
                  l.median_us, l.p99_us, l.median_us - direct_latency.median_us);
    }
  }

  // 4. Memory.
  if (want('4')) {
    const int idle = absl::GetFlag(FLAGS_idle_sessions);
    std::printf("\n4. memory (RSS of this process; the upstream is a separate process)\n");
    {
      std::vector<std::unique_ptr<SessionProxies>> sessions;
      // One start/stop first, so one-time costs are not charged per session.
      StartSession(loop, resolver, upstream.port, -1)->Stop();
      const long before = RssKiB();
      for (int i = 0; i < idle; ++i) {
        sessions.push_back(StartSession(loop, resolver, upstream.port, i + 1));
      }
      const long after = RssKiB();
      std::printf(
          "   idle sessions  %d: RSS +%ld KiB = %.1f KiB per session  (target <= 1024 KiB)\n", idle,
          after - before, static_cast<double>(after - before) / idle);
      for (auto& s : sessions) s->Stop();
    }
    {
      const int tunnels = absl::GetFlag(FLAGS_open_tunnels);
      // Warm-up tunnels, closed again, so the loop's handler caches are not charged per tunnel.
      for (int i = 0; i < 50; ++i) OneRoundTrip(Mode::kHttpConnect, t);
      std::vector<int> fds;
      const long before = RssKiB();
      const long fds_before = OpenFds();
      const long socket_pages_before = TcpSocketPages();
      for (int i = 0; i < tunnels; ++i) {
        const int fd = Open(Mode::kHttpConnect, t);
        char c;
        if (fd >= 0 && SendAll(fd, "Ex", 2) && ReadExactly(fd, &c, 1)) fds.push_back(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const long after = RssKiB();
      const double n = static_cast<double>(fds.size());
      std::printf(
          "   open tunnels   %zu (proxy counts %zu), one byte each way, then idle:\n"
          "                  RSS +%ld KiB = %.2f KiB per tunnel  (target <= 32 KiB)\n"
          "                  proxy descriptors per tunnel %.1f; kernel TCP buffer pages "
          "(all sockets, both ends) %+ld\n",
          fds.size(), session->open_connections(), after - before, (after - before) / n,
          (OpenFds() - fds_before - n) / n, TcpSocketPages() - socket_pages_before);
      for (int fd : fds) close(fd);
    }
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
