#include "tests/bench/proxy_memory_figure.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/bench/bench_table.h"
#include "tests/bench/proc_usage.h"
#include "tests/bench/proxy_bench_session.h"

namespace ccsandbox::bench {
namespace {

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

long RssKiB() { return ReadUsage(getpid()).rss_kib; }
long OpenFds() { return ReadUsage(getpid()).fds; }

void IdleSessions(proxy::EventLoop& loop, std::shared_ptr<proxy::Resolver> resolver,
                  const Target& t, int idle) {
  std::vector<std::unique_ptr<proxy::SessionProxies>> sessions;
  // One start/stop first, so one-time costs are not charged per session.
  StartBenchSession(loop, resolver, t.upstream, -1)->Stop();
  const long before = RssKiB();
  for (int i = 0; i < idle; ++i) {
    sessions.push_back(StartBenchSession(loop, resolver, t.upstream, i + 1));
  }
  const long after = RssKiB();
  std::printf("   idle sessions  %d: RSS +%ld KiB = %.1f KiB per session  (target <= 1024 KiB)\n",
              idle, after - before, static_cast<double>(after - before) / idle);
  ReportRow({.figure = absl::StrCat("4 RSS per idle session (", idle, " sessions)"),
             .ours = static_cast<double>(after - before) / idle,
             .unit = "KiB",
             .target = AtMost(1024)});
  for (auto& s : sessions) s->Stop();
}

void OpenTunnels(const Target& t, proxy::SessionProxies& session, int tunnels) {
  // Warm-up tunnels, closed again, so the loop's handler caches are not charged per tunnel.
  for (int i = 0; i < 50; ++i) OneRoundTrip(Mode::kHttpConnect, t);
  std::vector<UniqueFd> fds;
  const long before = RssKiB();
  const long fds_before = OpenFds();
  const long socket_pages_before = TcpSocketPages();
  for (int i = 0; i < tunnels; ++i) {
    UniqueFd fd = Open(Mode::kHttpConnect, t);
    char c;
    if (fd.valid() && SendAll(fd.get(), "Ex", 2) && ReadExactly(fd.get(), &c, 1)) {
      fds.push_back(std::move(fd));
    }
  }
  // Settling time for the proxy's side of the last tunnels, not synchronisation.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const long after = RssKiB();
  const double n = static_cast<double>(fds.size());
  std::printf(
      "   open tunnels   %zu (proxy counts %zu), one byte each way, then idle:\n"
      "                  RSS +%ld KiB = %.2f KiB per tunnel  (target <= 32 KiB)\n"
      "                  proxy descriptors per tunnel %.1f; kernel TCP buffer pages "
      "(all sockets, both ends) %+ld\n",
      fds.size(), session.open_connections(), after - before, (after - before) / n,
      (OpenFds() - fds_before - n) / n, TcpSocketPages() - socket_pages_before);
  ReportRow({.figure = absl::StrCat("4 RSS per open tunnel (", fds.size(), " tunnels)"),
             .ours = (after - before) / n,
             .unit = "KiB",
             .target = AtMost(32)});
}

}  // namespace

void FigureProxyMemory(proxy::EventLoop& loop, std::shared_ptr<proxy::Resolver> resolver,
                       const Target& t, proxy::SessionProxies& session, int idle_sessions,
                       int tunnels) {
  std::printf("\n4. memory (RSS of this process; the upstream is a separate process)\n");
  IdleSessions(loop, std::move(resolver), t, idle_sessions);
  OpenTunnels(t, session, tunnels);
}

}  // namespace ccsandbox::bench
