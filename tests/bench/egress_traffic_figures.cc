#include "tests/bench/egress_traffic_figures.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/bench/bench_process.h"
#include "tests/bench/bench_table.h"

namespace ccsandbox::bench {

absl::Status FigureBulk(EgressBench& b, const std::vector<ClientPath>& paths,
                        const BulkOptions& options) {
  const uint64_t bytes = static_cast<uint64_t>(options.mib) << 20;
  const int runs = std::max(1, options.runs);
  for (const std::string& kib : options.read_kib) {
    absl::PrintF("1. bulk download, %d MiB, client reads of %s KiB, %d runs each (MB/s)\n",
                 options.mib, kib, runs);
    std::vector<std::vector<double>> samples(paths.size());
    for (int run = 0; run < runs && !g_stop; ++run) {
      for (size_t p = 0; p < paths.size(); ++p) {
        absl::StatusOr<Measured> m = RunClient(
            b, paths[p], {"--mode=bulk", absl::StrCat("--bytes=", bytes), "--read-kib=" + kib});
        if (!m.ok()) return m.status();
        const double mbps = ResultNumber(m->result, "mbps");
        samples[p].push_back(mbps);
        absl::PrintF("   %-16s %6.0f MB/s   cpu s: %s  (wall %.2f s)\n", paths[p].name, mbps,
                     CpuLine(*m, ResultNumber(m->result, "seconds"), false),
                     ResultNumber(m->result, "seconds"));
      }
    }
    if (g_stop) break;
    std::vector<double> best, median;
    for (std::vector<double>& v : samples) {
      std::sort(v.begin(), v.end());
      best.push_back(v.back());
      median.push_back(v[(v.size() - 1) / 2]);
    }
    absl::PrintF("   %-16s %9s %6s   %9s %6s\n", "", "best", "ratio", "median", "ratio");
    for (size_t p = 0; p < paths.size(); ++p) {
      absl::PrintF("   %-16s %4.0f MB/s %5.2fx   %4.0f MB/s %5.2fx", paths[p].name, best[p],
                   best[p] / best[0], median[p], median[p] / median[0]);
      if (paths[p].sandbox) absl::PrintF("   (target >= 0.50x direct through the bridge)");
      absl::PrintF("\n");
      if (p > 0) {
        ReportRow(
            {.figure = absl::StrCat("1 bulk, ", kib, " KiB reads: ", paths[p].name, ", median"),
             .ours = median[p],
             .unit = "MB/s",
             .baseline_name = paths[0].name,
             .baseline = median[0],
             .target = paths[p].sandbox ? RatioAtLeast(0.5) : NoTarget()});
      }
    }
    absl::PrintF("\n");
  }
  return absl::OkStatus();
}

absl::Status FigureRate(EgressBench& b, const std::vector<ClientPath>& paths,
                        const RateOptions& options) {
  const int clients = options.clients;
  const double seconds = options.seconds;
  absl::PrintF(
      "2a. tunnels per second, %d concurrent clients, %.1f s each (connect, handshake, 1 byte each "
      "way, close); cpu as %% of wall\n",
      clients, seconds);
  double direct = 0;
  for (const ClientPath& path : paths) {
    if (g_stop) break;
    absl::StatusOr<Measured> m = RunClient(
        b, path,
        {"--mode=rate", absl::StrCat("--clients=", clients), absl::StrCat("--seconds=", seconds)});
    if (!m.ok()) return m.status();
    const double rate = ResultNumber(m->result, "per_s");
    if (direct == 0) direct = rate;
    absl::PrintF("   %-16s %7.0f /s", path.name, rate);
    if (path.name == paths[0].name) {
      absl::PrintF("%16s", "");
    } else {
      absl::PrintF("   %5.2fx direct", rate / direct);
    }
    absl::PrintF("   %s", CpuLine(*m, ResultNumber(m->result, "seconds"), true));
    if (ResultNumber(m->result, "failures") > 0)
      absl::PrintF("   failures %s", m->result["failures"]);
    absl::PrintF("%s\n", path.sandbox ? "   (target >= 2,000/s)" : "");
    if (path.name != paths[0].name) {
      ReportRow({.figure = absl::StrCat("2a tunnels/s, ", clients, " clients: ", path.name),
                 .ours = rate,
                 .unit = "/s",
                 .baseline_name = paths[0].name,
                 .baseline = direct,
                 .target = path.sandbox ? AtLeast(2000) : NoTarget()});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let TIME_WAIT settle
  }

  const int runs = options.ttfb_runs;
  absl::PrintF(
      "\n2b. time to first byte: connect + handshake + 1 byte echoed, %d sequential runs (us)\n",
      runs);
  double direct_median = 0, direct_p90 = 0;
  for (const ClientPath& path : paths) {
    if (g_stop) break;
    absl::StatusOr<Measured> m = RunClient(b, path, {"--mode=ttfb", absl::StrCat("--runs=", runs)});
    if (!m.ok()) return m.status();
    const double median = ResultNumber(m->result, "median_us"),
                 p90 = ResultNumber(m->result, "p90_us");
    if (path.name == paths[0].name) {
      direct_median = median;
      direct_p90 = p90;
    }
    absl::PrintF("   %-16s median %7.1f   p90 %7.1f   p99 %7.1f", path.name, median, p90,
                 ResultNumber(m->result, "p99_us"));
    if (path.name != paths[0].name) {
      absl::PrintF("   added %+7.1f (median) %+7.1f (p90)", median - direct_median,
                   p90 - direct_p90);
    }
    if (ResultNumber(m->result, "failures") > 0)
      absl::PrintF("   failures %s", m->result["failures"]);
    absl::PrintF("\n");
    if (path.name != paths[0].name) {
      ReportRow({.figure = absl::StrCat("2b time to first byte: ", path.name, ", median"),
                 .ours = median,
                 .unit = "us",
                 .baseline_name = paths[0].name,
                 .baseline = direct_median});
    }
  }
  absl::PrintF("\n");
  return absl::OkStatus();
}

}  // namespace ccsandbox::bench
