#include "tests/bench/egress_memory_figure.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/bench/bench_process.h"
#include "tests/bench/bench_table.h"
#include "tests/bench/broker_client.h"
#include "tests/bench/proc_usage.h"

namespace ccsandbox::bench {

absl::Status FigureBrokerMemory(EgressBench& b, int sessions, int tunnels) {
  absl::PrintF("3. broker memory (VmRSS of sandbox_brokerd, pid %d)\n", b.broker_pid);
  const int n = std::max(1, sessions);
  // A few Launch/Destroy first, so one-time costs (gRPC, allocator arenas) are not charged per
  // session.
  for (int i = 0; i < 5; ++i) {
    const std::string id = absl::StrCat("egress-bench-warm-", i);
    if (absl::Status s = Launch(*b.stub, SessionSpec(b, id)); !s.ok()) return s;
    (void)Destroy(*b.stub, id);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const long rss0 = ReadUsage(b.broker_pid).rss_kib;
  const long fds0 = ReadUsage(b.broker_pid).fds;
  std::vector<std::string> ids;
  absl::Status launched;
  for (int i = 0; i < n && !g_stop && launched.ok(); ++i) {
    ids.push_back(absl::StrCat("egress-bench-idle-", i));
    launched = Launch(*b.stub, SessionSpec(b, ids.back()));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const long rss1 = ReadUsage(b.broker_pid).rss_kib;
  const long fds1 = ReadUsage(b.broker_pid).fds;
  for (const std::string& id : ids) (void)Destroy(*b.stub, id);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const long rss2 = ReadUsage(b.broker_pid).rss_kib;
  if (!launched.ok()) return launched;
  absl::PrintF(
      "   idle sessions %4d: RSS %ld -> %ld KiB: %+.1f KiB per session   (target <= 1024 KiB)\n"
      "                       descriptors %.1f per session; RSS after destroying them all: %ld "
      "KiB\n",
      n, rss0, rss1, static_cast<double>(rss1 - rss0) / n, static_cast<double>(fds1 - fds0) / n,
      rss2);
  ReportRow({.figure = absl::StrCat("3 broker RSS per idle session (", n, " sessions)"),
             .ours = static_cast<double>(rss1 - rss0) / n,
             .unit = "KiB",
             .target = AtMost(1024)});

  // Open tunnels, held by one sandboxed client through the bridge.
  const std::string signals = b.workdir + "/signals";
  std::filesystem::create_directory(signals);
  long broker0 = 0, broker1 = 0, bfds0 = 0, bfds1 = 0, bridge0 = 0, bridge1 = 0, held = 0;
  auto touch = [&](const std::string& name) { std::ofstream(signals + "/" + name) << ""; };
  auto on_line = [&](const std::string& line) {
    if (line.rfind("stage=", 0) != 0) return;
    Fields f = ParseFields(line);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (f["stage"] == "ready") {
      broker0 = ReadUsage(b.broker_pid).rss_kib;
      bfds0 = ReadUsage(b.broker_pid).fds;
      bridge0 = static_cast<long>(ResultNumber(f, "bridge_rss_kib"));
      touch("open");
    } else if (f["stage"] == "held") {
      broker1 = ReadUsage(b.broker_pid).rss_kib;
      bfds1 = ReadUsage(b.broker_pid).fds;
      bridge1 = static_cast<long>(ResultNumber(f, "bridge_rss_kib"));
      held = static_cast<long>(ResultNumber(f, "tunnels"));
      touch("close");
    }
  };
  absl::StatusOr<Measured> m =
      RunInSandbox(b,
                   {"--mode=hold", "--via=connect", absl::StrCat("--tunnels=", tunnels),
                    "--signal-dir=" + signals},
                   on_line);
  std::error_code ignored;
  std::filesystem::remove_all(signals, ignored);
  if (!m.ok()) return m.status();
  const double per = static_cast<double>(std::max(1L, held));
  absl::PrintF(
      "   open tunnels  %4ld (CONNECT through the bridge, 1 byte each way, then idle):\n"
      "                       broker RSS %ld -> %ld KiB: %+.2f KiB per tunnel   (target <= 32 "
      "KiB)\n"
      "                       broker descriptors %.2f per tunnel; bridge (shim) RSS %+.2f KiB per "
      "tunnel\n",
      held, broker0, broker1, (broker1 - broker0) / per, (bfds1 - bfds0) / per,
      (bridge1 - bridge0) / per);
  ReportRow({.figure = absl::StrCat("3 broker RSS per open tunnel (", held, " tunnels)"),
             .ours = (broker1 - broker0) / per,
             .unit = "KiB",
             .target = AtMost(32)});
  return absl::OkStatus();
}

// The CLI path once, with a spec file, as a check that the whole chain works

}  // namespace ccsandbox::bench
