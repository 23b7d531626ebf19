// egress_bench_client: the traffic ends of //tests/bench:egress_bench. The
// bench runs it as the upstream on the host, copies it into the sandbox's work
// tree and runs it there (its connections then go 127.0.0.1:3128 / :1080 -> the
// shim's bridge -> the session's proxy), and runs it on the host for the direct
// figures. Each run prints one line "result mode=... key=value ..." on stdout;
// hold mode prints one "stage=..." line per stage.
//
//   --mode=upstream                  serve 127.0.0.1:0, print "port=N", run
//   --mode=bulk --via=V --bytes=N [--read-kib=K]
//                                    one download of N bytes, timed
//   --mode=rate --via=V [--clients=16] [--seconds=3]
//                                    open, 1 byte each way, close; in a loop
//   --mode=ttfb --via=V [--runs=2000]
//                                    the same, sequentially, each one timed
//   --mode=hold --via=V --tunnels=N --signal-dir=D
//                                    open N tunnels once D/open exists, hold
//                                    them until D/close exists
//   V: direct (127.0.0.1 and the port of --target), connect (HTTP CONNECT
//   through --http-proxy), socks (SOCKS5 CONNECT with a domain name through
//   --socks-proxy); a proxy is HOST:PORT on 127.0.0.1 (default: the sandbox's
//   3128 / 1080) or unix:PATH.
//
// Upstream protocol (the one proxy_bench uses): 'S' + 8-byte big-endian N -> N
// bytes, then EOF; 'E' -> echo until EOF. Inside a sandbox the client's parent
// is the shim, so bulk, rate and hold also report the bridge's CPU time and RSS
// (bridge_cpu_s, bridge_rss_kib).
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "asio/ip/tcp.hpp"
#include "asio/read.hpp"
#include "asio/write.hpp"
#include "base/dashed_flags.h"
#include "proxy/proxy_test_support.h"
#include "tests/bench/bench_upstream.h"
#include "tests/bench/proc_cpu.h"
#include "tests/bench/proxy_bench_client.h"

ABSL_FLAG(std::string, mode, "", "upstream, bulk, rate, ttfb or hold");
ABSL_FLAG(std::string, via, "connect", "direct, connect or socks");
ABSL_FLAG(std::string, target, "", "HOST:PORT of the upstream, as the proxy is asked for it");
ABSL_FLAG(std::string, http_proxy, "127.0.0.1:3128", "HOST:PORT or unix:PATH");
ABSL_FLAG(std::string, socks_proxy, "127.0.0.1:1080", "HOST:PORT or unix:PATH");
ABSL_FLAG(uint64_t, bytes, 1 << 30, "bulk: bytes to download");
ABSL_FLAG(int, read_kib, 1024, "bulk: client read size, KiB");
ABSL_FLAG(int, clients, 16, "rate: concurrent clients");
ABSL_FLAG(double, seconds, 3.0, "rate: seconds");
ABSL_FLAG(int, runs, 2000, "ttfb: sequential connections");
ABSL_FLAG(int, tunnels, 500, "hold: tunnels to open");
ABSL_FLAG(std::string, signal_dir, "", "hold: where the files `open` and `close` appear");

namespace {

using Clock = std::chrono::steady_clock;
using ccsandbox::bench::ReadConnectReply;
using ccsandbox::bench::Socks5Connect;
using ccsandbox::proxy::testing::ConnectTo;
using ccsandbox::proxy::testing::Fd;
using ccsandbox::proxy::testing::ReadExactly;
using ccsandbox::proxy::testing::SendAll;

// ---- The upstream ----

int RunUpstream() {
  asio::io_context context(1);
  asio::ip::tcp::acceptor acceptor(context,
                                   asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  acceptor.listen(4096);
  std::printf("port=%u\n", acceptor.local_endpoint().port());
  std::fflush(stdout);
  ccsandbox::bench::ServeUpstream(acceptor);
  context.run();
  return 0;
}

// ---- Client side ----

enum class Via { kDirect, kConnect, kSocks };

struct Endpoints {
  Via via = Via::kConnect;
  std::string host;  // the target's name, as the proxy is asked for it
  uint16_t port = 0;
  std::string proxy;  // HOST:PORT (127.0.0.1 only) or unix:PATH
};

Fd ConnectUnix(const std::string& path) {
  Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof(a.sun_path)) return Fd();
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return Fd();
  timeval tv{10, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  return fd;
}

Fd ConnectProxy(const std::string& proxy) {
  if (proxy.rfind("unix:", 0) == 0) return ConnectUnix(proxy.substr(5));
  uint32_t port = 0;
  if (!absl::SimpleAtoi(proxy.substr(proxy.rfind(':') + 1), &port)) return Fd();
  return ConnectTo(static_cast<uint16_t>(port));  // 127.0.0.1
}

// A connection to the upstream the way `e.via` makes one; invalid on any
// failure.
Fd Open(const Endpoints& e) {
  if (e.via == Via::kDirect) return ConnectTo(e.port);
  Fd fd = ConnectProxy(e.proxy);
  if (!fd.valid()) return fd;
  const bool ok = e.via == Via::kConnect
                      ? SendAll(fd.get(), absl::StrCat("CONNECT ", e.host, ":", e.port,
                                                       " HTTP/1.1\r\nHost: ", e.host, ":", e.port,
                                                       "\r\n\r\n")) &&
                            ReadConnectReply(fd.get())
                      : Socks5Connect(fd.get(), e.host, e.port);
  return ok ? std::move(fd) : Fd();
}

// Open, one byte each way, close.
bool RoundTrip(const Endpoints& e) {
  Fd fd = Open(e);
  return fd.valid() && SendAll(fd.get(), "Ex") && ReadExactly(fd.get(), 1) == "x";
}

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double OwnCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

std::string ReadProcFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Inside a sandbox our parent is the shim (bound in as /run/ccsandbox/shim),
// whose event loop is the bridge.
bool ParentIsBridge() {
  const std::string cmdline = ReadProcFile(absl::StrCat("/proc/", getppid(), "/cmdline"));
  return cmdline.find(std::string("\0--bridge=", 10)) != std::string::npos;
}

double BridgeCpuSeconds() {
  return ccsandbox::bench::CpuSeconds(absl::StrCat("/proc/", getppid(), "/stat"));
}

long BridgeRssKiB() {
  std::istringstream status(ReadProcFile(absl::StrCat("/proc/", getppid(), "/status")));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

// CPU seconds of this process and of the bridge since construction, as
// "key=value" fields.
class CpuMeter {
 public:
  CpuMeter() : bridge_(ParentIsBridge()), own_(OwnCpuSeconds()), shim_(Cpu()) {}
  std::string Fields() const {
    std::string out = absl::StrCat("cpu_s=", OwnCpuSeconds() - own_);
    if (bridge_) absl::StrAppend(&out, " bridge_cpu_s=", Cpu() - shim_);
    return out;
  }

 private:
  double Cpu() const { return bridge_ ? BridgeCpuSeconds() : 0; }
  bool bridge_;
  double own_;
  double shim_;
};

void Result(const std::string& fields) {
  std::printf("result mode=%s via=%s %s\n", absl::GetFlag(FLAGS_mode).c_str(),
              absl::GetFlag(FLAGS_via).c_str(), fields.c_str());
  std::fflush(stdout);
}

int Bulk(const Endpoints& e) {
  const uint64_t bytes = absl::GetFlag(FLAGS_bytes);
  std::vector<char> buf(static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_read_kib))) << 10);
  Fd fd = Open(e);
  if (!fd.valid()) {
    std::fprintf(stderr, "bulk: cannot open a connection\n");
    return 1;
  }
  std::string request = "S";
  for (int shift = 56; shift >= 0; shift -= 8) request.push_back(static_cast<char>(bytes >> shift));
  const CpuMeter cpu;
  const auto start = Clock::now();
  if (!SendAll(fd.get(), request)) return 1;
  uint64_t got = 0;
  while (got < bytes) {
    const ssize_t n = read(fd.get(), buf.data(), buf.size());
    if (n <= 0) break;
    got += static_cast<uint64_t>(n);
  }
  const double seconds = Seconds(start);
  Result(absl::StrCat("bytes=", got, " seconds=", seconds,
                      " mbps=", static_cast<double>(got) / 1e6 / seconds, " ", cpu.Fields()));
  return got == bytes ? 0 : 1;
}

int Rate(const Endpoints& e) {
  std::atomic<long> done{0};
  std::atomic<long> failed{0};
  std::atomic<bool> stop{false};
  const CpuMeter cpu;
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < absl::GetFlag(FLAGS_clients); ++i) {
    threads.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        (RoundTrip(e) ? done : failed).fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(absl::GetFlag(FLAGS_seconds)));
  stop = true;
  for (std::thread& thread : threads) thread.join();
  const double seconds = Seconds(start);
  Result(absl::StrCat("per_s=", static_cast<double>(done.load()) / seconds, " done=", done.load(),
                      " failures=", failed.load(), " seconds=", seconds, " ", cpu.Fields()));
  return 0;
}

double NearestRank(const std::vector<double>& sorted, double q) {
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

int Ttfb(const Endpoints& e) {
  std::vector<double> us;
  long failures = 0;
  for (int i = 0; i < absl::GetFlag(FLAGS_runs); ++i) {
    const auto start = Clock::now();
    if (!RoundTrip(e)) {
      ++failures;
      continue;
    }
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  if (us.empty()) {
    std::fprintf(stderr, "ttfb: every connection failed\n");
    return 1;
  }
  std::sort(us.begin(), us.end());
  Result(absl::StrCat("n=", us.size(), " failures=", failures, " median_us=", NearestRank(us, 0.5),
                      " p90_us=", NearestRank(us, 0.9), " p99_us=", NearestRank(us, 0.99)));
  return 0;
}

bool WaitForFile(const std::string& path) {
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (access(path.c_str(), F_OK) != 0) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

int Hold(const Endpoints& e) {
  const std::string dir = absl::GetFlag(FLAGS_signal_dir);
  const bool bridge = ParentIsBridge();
  // Warm-up tunnels, closed again, so one-time costs are not charged per
  // tunnel.
  for (int i = 0; i < 50; ++i) RoundTrip(e);
  std::printf("stage=ready bridge_rss_kib=%ld\n", bridge ? BridgeRssKiB() : 0L);
  std::fflush(stdout);
  if (!WaitForFile(dir + "/open")) return 1;
  std::vector<Fd> open;
  long failures = 0;
  for (int i = 0; i < absl::GetFlag(FLAGS_tunnels); ++i) {
    Fd fd = Open(e);
    if (fd.valid() && SendAll(fd.get(), "Ex") && ReadExactly(fd.get(), 1) == "x") {
      open.push_back(std::move(fd));
    } else {
      ++failures;
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::printf("stage=held tunnels=%zu failures=%ld bridge_rss_kib=%ld\n", open.size(), failures,
              bridge ? BridgeRssKiB() : 0L);
  std::fflush(stdout);
  if (!WaitForFile(dir + "/close")) return 1;
  open.clear();
  Result(absl::StrCat("tunnels=", absl::GetFlag(FLAGS_tunnels) - failures));
  return 0;
}

int Main(int argc, char** argv) {
  ccsandbox::ParseDashedCommandLine(argc,
                                    argv);  // --read-kib as well as --read_kib
  signal(SIGPIPE, SIG_IGN);
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "upstream") return RunUpstream();

  Endpoints e;
  const std::string via = absl::GetFlag(FLAGS_via);
  const std::string target = absl::GetFlag(FLAGS_target);
  const size_t colon = target.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(target.substr(colon + 1), &port) ||
      port == 0 || port > 65535) {
    std::fprintf(stderr, "--target: '%s' is not HOST:PORT\n", target.c_str());
    return 2;
  }
  e.host = target.substr(0, colon);
  e.port = static_cast<uint16_t>(port);
  if (via == "direct") {
    e.via = Via::kDirect;
  } else if (via == "connect") {
    e.via = Via::kConnect;
    e.proxy = absl::GetFlag(FLAGS_http_proxy);
  } else if (via == "socks") {
    e.via = Via::kSocks;
    e.proxy = absl::GetFlag(FLAGS_socks_proxy);
  } else {
    std::fprintf(stderr, "--via: '%s' is not direct, connect or socks\n", via.c_str());
    return 2;
  }
  if (mode == "bulk") return Bulk(e);
  if (mode == "rate") return Rate(e);
  if (mode == "ttfb") return Ttfb(e);
  if (mode == "hold") return Hold(e);
  std::fprintf(stderr, "--mode: '%s' is not upstream, bulk, rate, ttfb or hold\n", mode.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
