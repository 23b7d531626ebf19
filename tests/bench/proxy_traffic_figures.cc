#include "tests/bench/proxy_traffic_figures.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tests/bench/bench_process.h"
#include "tests/bench/bench_table.h"
#include "tests/bench/proc_cpu.h"

namespace ccsandbox::bench {
namespace {

// One bulk transfer of `bytes` from the upstream the way `mode` connects, read `read_size` at
// a time; prints its line and returns MB/s (0 when it failed).
double BulkMBps(Mode mode, const Target& t, uint64_t bytes, size_t read_size) {
  const std::string upstream_stat = absl::StrCat("/proc/", t.upstream_pid, "/stat");
  std::string loop_stat = LoopThreadStat(getpid());
  if (mode == Mode::kRelay) {
    loop_stat = t.relay_pid > 0 ? absl::StrCat("/proc/", t.relay_pid, "/stat") : "";
  }
  const std::string client_stat = absl::StrCat("/proc/self/task/", gettid(), "/stat");
  const double cpu_before[3] = {CpuSeconds(upstream_stat), CpuSeconds(loop_stat),
                                CpuSeconds(client_stat)};
  // A relay's /proc/<pid>/status counts its main thread only: not shown.
  const std::string loop_status = mode == Mode::kRelay ? "" : StatusOf(loop_stat);
  const long switches_before[3] = {ContextSwitches(StatusOf(upstream_stat)),
                                   ContextSwitches(loop_status),
                                   ContextSwitches(StatusOf(client_stat))};
  const UniqueFd fd = Open(mode, t);
  if (!fd.valid()) return 0;
  std::string request = "S";
  for (int shift = 56; shift >= 0; shift -= 8) request.push_back(static_cast<char>(bytes >> shift));
  std::vector<char> buf(read_size);
  const auto start = Clock::now();
  SendAll(fd.get(), request);
  uint64_t got = 0;
  while (got < bytes) {
    const ssize_t n = read(fd.get(), buf.data(), buf.size());
    if (n <= 0) break;
    got += static_cast<uint64_t>(n);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu[3] = {CpuSeconds(upstream_stat) - cpu_before[0],
                         CpuSeconds(loop_stat) - cpu_before[1],
                         CpuSeconds(client_stat) - cpu_before[2]};
  const long switches[3] = {ContextSwitches(StatusOf(upstream_stat)) - switches_before[0],
                            ContextSwitches(loop_status) - switches_before[1],
                            ContextSwitches(StatusOf(client_stat)) - switches_before[2]};
  std::printf(
      "     %-13s %6.0f MB/s  cpu s: upstream %.2f proxy %.2f client %.2f, "
      "wall %.2f; context switches: upstream %ld proxy %ld client %ld\n",
      ModeName(mode), static_cast<double>(bytes) / 1e6 / seconds, cpu[0], cpu[1], cpu[2], seconds,
      switches[0], switches[1], switches[2]);
  if (got != bytes) {
    std::printf("  (%s: short transfer %llu of %llu bytes)\n", ModeName(mode),
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
  // The measurement's length, not synchronisation.
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

}  // namespace

void FigureProxyBulk(const Target& t, const ProxyBulkOptions& options) {
  auto bulk_mode = [&](Mode mode) {
    return std::find(options.modes.begin(), options.modes.end(), ModeFlagName(mode)) !=
           options.modes.end();
  };
  const uint64_t bytes = static_cast<uint64_t>(options.mib) << 20;
  for (const std::string& kib : options.read_kib) {
    const size_t read_size = static_cast<size_t>(std::stoul(kib)) << 10;
    std::printf(
        "\n1. bulk download, %d MiB, client reads of %s KiB, %d runs each, alternating (MB/s)\n",
        options.mib, kib.c_str(), options.runs);
    // One row per path: direct, http CONNECT, socks5, then the reference relays.
    std::vector<std::vector<double>> runs(3 + options.relay_ports.size());
    for (int run = 0; run < options.runs; ++run) {
      for (Mode mode : {Mode::kDirect, Mode::kHttpConnect, Mode::kSocks5}) {
        if (bulk_mode(mode)) {
          runs[static_cast<int>(mode)].push_back(BulkMBps(mode, t, bytes, read_size));
        }
      }
      for (size_t i = 0; i < options.relay_ports.size(); ++i) {
        Target relay = t;
        relay.relay = options.relay_ports[i];
        if (i < options.relay_pids.size()) relay.relay_pid = options.relay_pids[i];
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
      const std::string name = row < 3 ? ModeName(static_cast<Mode>(row))
                                       : absl::StrCat("relay :", options.relay_ports[row - 3]);
      std::printf("   %-13s best %6.0f (%.2fx)    median %6.0f (%.2fx)   %s\n", name.c_str(),
                  s.best, s.best / direct.best, s.median, s.median / direct.median,
                  row < 3 ? "(target >= 0.70x direct)" : "(reference relay, not ours)");
      if (!runs[row].empty()) {
        ReportRow({.figure = absl::StrCat("1 bulk, ", kib, " KiB reads: ", name, ", median"),
                   .ours = s.median,
                   .unit = "MB/s",
                   .baseline_name = "direct",
                   .baseline = direct.median,
                   .target = row < 3 ? RatioAtLeast(0.7) : NoTarget()});
      }
    }
  }
}

void FigureProxyRate(const Target& t, int clients, double seconds) {
  std::printf("\n2. connections per second, %d concurrent clients, %.1f s each\n", clients,
              seconds);
  Rate direct_rate;
  for (Mode mode : {Mode::kDirect, Mode::kHttpConnect, Mode::kSocks5}) {
    const Rate rate = ConnectionRate(mode, t, clients, seconds);
    if (mode == Mode::kDirect) direct_rate = rate;
    std::printf("   %-13s %8.0f /s", ModeName(mode), rate.per_second);
    if (mode != Mode::kDirect) {
      std::printf("   %.2fx direct   (target >= 5,000 tunnels/s)",
                  rate.per_second / direct_rate.per_second);
    }
    std::printf("%s\n", rate.failures ? absl::StrCat("   failures: ", rate.failures).c_str() : "");
    if (mode != Mode::kDirect) {
      ReportRow({.figure = absl::StrCat("2 tunnels/s, ", clients, " clients: ", ModeName(mode)),
                 .ours = rate.per_second,
                 .unit = "/s",
                 .baseline_name = "direct connections",
                 .baseline = direct_rate.per_second,
                 .target = AtLeast(5000)});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let TIME_WAIT settle
  }
}

void FigureProxyFirstByte(const Target& t, int runs) {
  std::printf("\n3. time to first byte: connect + handshake + 1 byte echoed, %d sequential runs\n",
              runs);
  const Latency direct = TimeToFirstByte(Mode::kDirect, t, runs);
  std::printf("   direct        median %7.1f us   p99 %7.1f us\n", direct.median_us, direct.p99_us);
  for (Mode mode : {Mode::kHttpConnect, Mode::kSocks5}) {
    const Latency l = TimeToFirstByte(mode, t, runs);
    std::printf("   %-13s median %7.1f us   p99 %7.1f us   added %+.1f us (median)\n",
                ModeName(mode), l.median_us, l.p99_us, l.median_us - direct.median_us);
    ReportRow({.figure = absl::StrCat("3 time to first byte: ", ModeName(mode), ", median"),
               .ours = l.median_us,
               .unit = "us",
               .baseline_name = "direct",
               .baseline = direct.median_us});
  }
}

}  // namespace ccsandbox::bench
