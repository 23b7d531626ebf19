#include "tests/bench/resource_figures.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/bench/bench_stats.h"
#include "tests/bench/bench_table.h"
#include "tests/bench/broker_client.h"
#include "tests/bench/proc_usage.h"

namespace ccsandbox::bench {
namespace {

constexpr std::chrono::seconds kSettleTimeout(10);

// The memory of the stack at one moment.
struct StackUsage {
  ProcessUsage launcher;
  ProcessUsage broker;     // with its descendants, if it has any
  ProcessUsage sandboxes;  // every descendant of the launcher
  int listed = 0;          // sessions the broker lists

  ProcessUsage Total() const { return launcher + broker + sandboxes; }
};

StackUsage ReadStack(const BenchSetup& setup) {
  StackUsage usage;
  usage.launcher = ReadUsage(setup.launcher_pid);
  usage.broker = ReadUsage(setup.broker_pid) + SumUsage(Descendants(setup.broker_pid));
  usage.sandboxes = SumUsage(Descendants(setup.launcher_pid));
  absl::StatusOr<int> listed = CountSessions(*setup.stub);
  usage.listed = listed.ok() ? *listed : -1;
  return usage;
}

// Waits until the launcher's descendants stop changing in number (three equal scans 20 ms apart;
// at most kSettleTimeout): a sandbox a Launch started may still be forking its first processes.
void AwaitSteadyTree(pid_t launcher) {
  const Clock::time_point deadline = Clock::now() + kSettleTimeout;
  size_t last = Descendants(launcher).size();
  for (int same = 0; same < 3 && Clock::now() < deadline && !g_stop;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const size_t now = Descendants(launcher).size();
    same = now == last ? same + 1 : 0;
    last = now;
  }
}

void PrintStackRow(const std::string& label, const StackUsage& u) {
  const ProcessUsage total = u.Total();
  absl::PrintF("  %-22s %6d %6d %9.1f %9.1f %9.1f %9.1f %9.1f\n", label, u.listed,
               u.sandboxes.processes, MiB(u.launcher.pss_kib), MiB(u.broker.pss_kib),
               MiB(u.sandboxes.pss_kib), MiB(total.pss_kib), MiB(total.rss_kib));
}

void PrintIncrement(const std::string& label, const StackUsage& from, const StackUsage& to,
                    int sessions) {
  const ProcessUsage a = from.Total();
  const ProcessUsage b = to.Total();
  const double n = std::max(1, sessions);
  absl::PrintF("  per session, %-14s %+6.2f MiB Pss %+6.2f MiB VmRSS %+5.1f procs", label + ":",
               MiB(b.pss_kib - a.pss_kib) / n, MiB(b.rss_kib - a.rss_kib) / n,
               (to.sandboxes.processes - from.sandboxes.processes) / n);
  absl::PrintF("  (Pss: sandboxes %+.2f, broker %+.2f, launcher %+.2f)\n",
               MiB(to.sandboxes.pss_kib - from.sandboxes.pss_kib) / n,
               MiB(to.broker.pss_kib - from.broker.pss_kib) / n,
               MiB(to.launcher.pss_kib - from.launcher.pss_kib) / n);
}

void PrintBeforeAfter(const std::string& label, long before, long after) {
  absl::PrintF("  %-22s %10ld %10ld %+10ld\n", label, before, after, after - before);
}

void PrintBeforeAfterMiB(const std::string& label, long before_kib, long after_kib) {
  absl::PrintF("  %-22s %6.1f MiB %6.1f MiB %+6.2f MiB\n", label, MiB(before_kib), MiB(after_kib),
               MiB(after_kib - before_kib));
}

}  // namespace

absl::Status FigureMemory(const BenchSetup& setup, int sessions) {
  // Launch/Destroy first, so one-time costs (gRPC, allocator arenas) are not charged per session.
  for (int i = 0; i < std::max(1, setup.warmup) && !g_stop; ++i) {
    const v1::SandboxSpec spec = setup.SpecNamed(absl::StrCat("f-warm", i));
    if (absl::Status s = Launch(*setup.stub, spec); !s.ok()) return s;
    if (absl::Status s = Destroy(*setup.stub, spec.session_id()); !s.ok()) return s;
  }
  // Sandboxes of earlier figures may still be ending; with no session there should be none.
  const int stray = AwaitDescendantCount(setup.launcher_pid, 0, kSettleTimeout);
  const StackUsage zero = ReadStack(setup);

  std::vector<std::string> ids;
  absl::Cleanup destroy_all = [&] {
    for (const std::string& id : ids) Destroy(*setup.stub, id).IgnoreError();
  };
  auto launch_up_to = [&](int count) -> absl::Status {
    while (static_cast<int>(ids.size()) < count && !g_stop) {
      const v1::SandboxSpec spec = setup.SpecNamed(absl::StrCat("f", ids.size()));
      if (absl::Status s = Launch(*setup.stub, spec); !s.ok()) return s;
      ids.push_back(spec.session_id());
    }
    AwaitSteadyTree(setup.launcher_pid);
    return g_stop ? absl::CancelledError("interrupted") : absl::OkStatus();
  };
  if (absl::Status s = launch_up_to(1); !s.ok()) return s;
  const StackUsage one = ReadStack(setup);
  if (absl::Status s = launch_up_to(sessions); !s.ok()) return s;
  const StackUsage many = ReadStack(setup);
  const Clock::time_point destroy_start = Clock::now();
  for (const std::string& id : ids) {
    if (absl::Status s = Destroy(*setup.stub, id); !s.ok()) return s;
  }
  ids.clear();
  const double destroy_ms = MsSince(destroy_start);
  const int left =
      AwaitDescendantCount(setup.launcher_pid, zero.sandboxes.processes, kSettleTimeout);
  const double gone_ms = MsSince(destroy_start);
  const StackUsage after = ReadStack(setup);

  absl::PrintF(
      "F  memory: launcher + broker + the launcher's descendants (sandboxes); Pss in MiB\n");
  absl::PrintF("  %-22s %6s %6s %9s %9s %9s %9s %9s\n", "", "listed", "procs", "launcher", "broker",
               "sandboxes", "total", "VmRSS");
  PrintStackRow("0 sessions", zero);
  PrintStackRow("1 idle session", one);
  PrintStackRow(absl::StrCat(sessions, " idle sessions"), many);
  PrintStackRow("after destroying all", after);
  PrintIncrement("the first", zero, one, 1);
  PrintIncrement(absl::StrCat("mean of ", sessions), zero, many, sessions);
  ReportRow({.figure = absl::StrCat("F memory per idle session (Pss, mean of ", sessions, ")"),
             .ours = MiB(many.Total().pss_kib - zero.Total().pss_kib) / std::max(1, sessions),
             .unit = "MiB"});
  absl::PrintF(
      "  destroying %d sessions: %.0f ms for the Destroy calls, %.0f ms until %d sandbox "
      "processes were left\n",
      sessions, destroy_ms, gone_ms, left);
  const int fallbacks = many.Total().pss_fallbacks;
  if (fallbacks > 0) {
    absl::PrintF("  (%d processes' smaps_rollup unreadable: counted with VmRSS as Pss)\n",
                 fallbacks);
  }
  if (stray > 0) {
    absl::PrintF("  (%d launcher descendants with no session, before the first Launch)\n", stray);
  }
  return absl::OkStatus();
}

absl::Status FigureLeaks(const BenchSetup& setup, int execs) {
  const v1::SandboxSpec spec = setup.SpecNamed("leak");
  if (absl::Status s = Launch(*setup.stub, spec); !s.ok()) return s;
  absl::Cleanup destroy = [&] { Destroy(*setup.stub, spec.session_id()).IgnoreError(); };
  AwaitSteadyTree(setup.launcher_pid);
  const int idle = static_cast<int>(Descendants(setup.launcher_pid).size());

  v1::ExecRequest exec;
  exec.set_session_id(spec.session_id());
  exec.add_argv("true");
  std::vector<Side> sides = {{"Exec", [&]() -> absl::StatusOr<double> {
                                absl::StatusOr<ExecTiming> timing = TimeExec(*setup.stub, exec);
                                if (!timing.ok()) return timing.status();
                                return timing->end;
                              }}};
  // The warm-up Execs settle one-time allocations before the "before" reading.
  if (absl::Status done = Alternate(setup.warmup, 0, sides); !done.ok()) return done;
  AwaitDescendantCount(setup.launcher_pid, idle, kSettleTimeout);
  const ProcessUsage launcher0 = ReadUsage(setup.launcher_pid);
  const ProcessUsage broker0 = ReadUsage(setup.broker_pid);

  if (absl::Status done = Alternate(0, execs, sides); !done.ok()) return done;
  const int right_after = static_cast<int>(Descendants(setup.launcher_pid).size());
  const Clock::time_point settle_start = Clock::now();
  const int settled = AwaitDescendantCount(setup.launcher_pid, idle, kSettleTimeout);
  const double settle_ms = MsSince(settle_start);
  const ProcessUsage launcher1 = ReadUsage(setup.launcher_pid);
  const ProcessUsage broker1 = ReadUsage(setup.broker_pid);

  absl::PrintF("G  leak check: %d Execs of `true` in one session\n", execs);
  absl::PrintF("  %-22s %10s %10s %10s\n", "", "before", "after", "change");
  PrintBeforeAfter("launcher descriptors", launcher0.fds, launcher1.fds);
  PrintBeforeAfterMiB("launcher VmRSS", launcher0.rss_kib, launcher1.rss_kib);
  PrintBeforeAfter("launcher threads", launcher0.threads, launcher1.threads);
  PrintBeforeAfter("broker descriptors", broker0.fds, broker1.fds);
  PrintBeforeAfterMiB("broker VmRSS", broker0.rss_kib, broker1.rss_kib);
  PrintBeforeAfter("broker threads", broker0.threads, broker1.threads);
  absl::PrintF(
      "  launcher's descendants: %d with the idle session; %d right after the last Exec; "
      "%d %s %.0f ms\n",
      idle, right_after, settled, settled == idle ? "(back to idle) after" : "(NOT idle) after",
      settle_ms);
  // Issue 18: nothing may leak; the descriptors and the sandboxes are counted exactly.
  const std::string after_execs = absl::StrCat(" after ", execs, " Execs");
  ReportRow({.figure = "G launcher descriptors" + after_execs,
             .ours = static_cast<double>(launcher1.fds - launcher0.fds),
             .target = AtMost(0)});
  ReportRow({.figure = "G broker descriptors" + after_execs,
             .ours = static_cast<double>(broker1.fds - broker0.fds),
             .target = AtMost(0)});
  ReportRow({.figure = "G sandbox processes beyond the idle session" + after_execs,
             .ours = static_cast<double>(settled - idle),
             .target = AtMost(0)});
  const std::vector<double>& ms = sides[0].ms;
  const size_t k = std::clamp<size_t>(ms.size() / 10, 1, 100);
  if (ms.size() >= 2 * k) {
    absl::PrintF("  Exec of `true`: median of the first %d %.2f ms, of the last %d %.2f ms\n", k,
                 Summarize({ms.begin(), ms.begin() + k}).median, k,
                 Summarize({ms.end() - k, ms.end()}).median);
  }
  return absl::OkStatus();
}

}  // namespace ccsandbox::bench
