#include "tests/bench/latency_figures.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "launcher/run_control.h"
#include "launcher/run_supervisor.h"
#include "launcher/sandbox_process.h"
#include "tests/bench/bench_stats.h"
#include "tests/bench/bench_table.h"
#include "tests/bench/broker_client.h"

namespace ccsandbox::bench {
namespace {

class DiscardSink : public launcher::EventSink {
 public:
  bool Emit(const v1::SandboxEvent&) override { return true; }
  bool Cancelled() override { return false; }
};

// The launcher's code for one native run minus gRPC: Spawn (fork ... execve of bwrap), then
// Supervise (poll loop to exit and EOF). {spawn ms, total ms}.
absl::StatusOr<std::pair<double, double>> TimeLauncherSpawn(const SpawnOptions& raw) {
  launcher::ProcessSpec spec;
  spec.executable = raw.argv[0];
  spec.argv = raw.argv;
  spec.envp = raw.envp;
  absl::StatusOr<std::unique_ptr<launcher::RunControl>> control = launcher::RunControl::Create();
  if (!control.ok()) return control.status();
  const Clock::time_point start = Clock::now();
  absl::StatusOr<std::unique_ptr<launcher::SandboxProcess>> process =
      launcher::SandboxProcess::Spawn(spec);
  if (!process.ok()) return process.status();
  const double spawn_ms = MsSince(start);
  DiscardSink sink;
  const launcher::RunOutcome outcome =
      launcher::Supervise(**process, **control, launcher::SuperviseOptions(), sink);
  const double total_ms = MsSince(start);
  if (outcome != launcher::RunOutcome::kExited) {
    return absl::InternalError("launcher spawn path: the run did not exit normally");
  }
  return std::make_pair(spawn_ms, total_ms);
}

Side RawSide(const BenchSetup& setup) {
  return {"raw bwrap", [&setup] { return TimeCommand(setup.raw); }};
}

// Drops the samples of the warm-up rounds from a series collected beside a Side's.
std::vector<double> Measured(std::vector<double> all, int warmup) {
  all.erase(all.begin(), all.begin() + std::min<size_t>(all.size(), warmup));
  return all;
}

}  // namespace

absl::Status FigureWarm(const BenchSetup& setup, int runs) {
  if (absl::Status launched = Launch(*setup.stub, setup.spec); !launched.ok()) return launched;
  absl::Cleanup destroy = [&] { Destroy(*setup.stub, setup.spec.session_id()).IgnoreError(); };
  v1::ExecRequest exec;
  exec.set_session_id(setup.spec.session_id());
  exec.add_argv("true");
  std::vector<ExecTiming> timings;
  const SpawnOptions fork_exec{.argv = {"/bin/true"}};
  std::vector<Side> sides = {{"ours",
                              [&]() -> absl::StatusOr<double> {
                                absl::StatusOr<ExecTiming> timing = TimeExec(*setup.stub, exec);
                                if (!timing.ok()) return timing.status();
                                timings.push_back(*timing);
                                return timing->end;
                              }},
                             RawSide(setup),
                             {"fork-exec", [&] { return TimeCommand(fork_exec); }}};
  if (absl::Status done = Alternate(setup.warmup, runs, sides); !done.ok()) return done;

  PrintSides("A  warm path: Exec([\"true\"]) on one session, vs raw bwrap and fork-exec", sides);
  PrintRatio("A warm Exec(true)", sides[0], sides[1], 0.3);
  PrintRatio("A warm Exec(true)", sides[0], sides[2], std::nullopt);
  std::vector<double> starting, ready, exit;
  for (size_t i = setup.warmup; i < timings.size(); ++i) {
    starting.push_back(timings[i].starting);
    ready.push_back(timings[i].ready);
    exit.push_back(timings[i].exit);
  }
  absl::PrintF(
      "  ours, median ms from the call to each event: starting %.2f, ready %.2f, exit %.2f, "
      "stream end %.2f\n",
      Summarize(starting).median, Summarize(ready).median, Summarize(exit).median,
      Summarize(sides[0].ms).median);
  return absl::OkStatus();
}

absl::Status FigureCli(const BenchSetup& setup, const SpawnOptions& cli, int runs) {
  std::vector<Side> sides = {{"ours", [&] { return TimeCommand(cli); }}, RawSide(setup)};
  if (absl::Status done = Alternate(setup.warmup, runs, sides); !done.ok()) return done;
  PrintSides("B  CLI path: `sandboxctl run -- true`, vs raw bwrap", sides);
  PrintRatio("B sandboxctl run -- true", sides[0], sides[1], 2.0);
  return absl::OkStatus();
}

absl::Status FigureStartup(const BenchSetup& setup, const SpawnOptions& probe, int runs) {
  std::vector<Side> sides = {{"sandboxctl", [&]() -> absl::StatusOr<double> {
                                const Clock::time_point start = Clock::now();
                                absl::StatusOr<Child> child = Child::Spawn(probe);
                                if (!child.ok()) return child.status();
                                (void)child->Wait();  // exits 125: no broker at that socket
                                return MsSince(start);
                              }}};
  if (absl::Status done = Alternate(setup.warmup, runs, sides); !done.ok()) return done;
  absl::PrintF("C  sandboxctl start-up alone, no RPC (N=%d)\n", sides[0].ms.size());
  const Summary s = Summarize(sides[0].ms);
  absl::PrintF("  median %.2f ms, p90 %.2f ms\n", s.median, s.p90);
  ReportRow({.figure = "C sandboxctl start-up, no RPC, median", .ours = s.median, .unit = "ms"});
  return absl::OkStatus();
}

absl::Status FigureDiagnosis(const BenchSetup& setup, int runs) {
  std::vector<double> spawn_ms;
  std::vector<Side> sides = {{"ours",
                              [&]() -> absl::StatusOr<double> {
                                absl::StatusOr<std::pair<double, double>> t =
                                    TimeLauncherSpawn(setup.raw);
                                if (!t.ok()) return t.status();
                                spawn_ms.push_back(t->first);
                                return t->second;
                              }},
                             RawSide(setup)};
  if (absl::Status done = Alternate(setup.warmup, runs, sides); !done.ok()) return done;
  PrintSides("D  launcher's Spawn + Supervise in this process, no RPC, vs raw bwrap", sides);
  PrintRatio("D launcher Spawn+Supervise, no RPC", sides[0], sides[1], std::nullopt);
  absl::PrintF("  SandboxProcess::Spawn (fork .. execve of bwrap): median %.2f ms\n",
               Summarize(Measured(spawn_ms, setup.warmup)).median);

  std::vector<Side> probe = {{"Probe", [&] { return TimeProbe(*setup.stub); }}};
  if (absl::Status done = Alternate(setup.warmup, runs, probe); !done.ok()) return done;
  absl::PrintF("  one unary RPC to the broker (Probe): median %.2f ms\n",
               Summarize(probe[0].ms).median);
  return absl::OkStatus();
}

absl::Status FigureLaunch(const BenchSetup& setup, int runs) {
  std::vector<double> destroy_ms;
  int launched = 0;
  std::vector<Side> sides = {{"Launch",
                              [&]() -> absl::StatusOr<double> {
                                const std::string id = absl::StrCat("e", launched++);
                                const v1::SandboxSpec spec = setup.SpecNamed(id);
                                const Clock::time_point start = Clock::now();
                                if (absl::Status s = Launch(*setup.stub, spec); !s.ok()) return s;
                                const double launch_ms = MsSince(start);
                                const Clock::time_point destroy_start = Clock::now();
                                if (absl::Status s = Destroy(*setup.stub, spec.session_id());
                                    !s.ok()) {
                                  return s;
                                }
                                destroy_ms.push_back(MsSince(destroy_start));
                                return launch_ms;
                              }},
                             RawSide(setup)};
  if (absl::Status done = Alternate(setup.warmup, runs, sides); !done.ok()) return done;
  PrintSides("E  cold start: Launch of a session with A's spec, vs raw bwrap", sides);
  PrintRatio("E cold start (Launch)", sides[0], sides[1], 1.5);
  PrintLine("Destroy of that session (not in the ratio)", Measured(destroy_ms, setup.warmup));
  return absl::OkStatus();
}

}  // namespace ccsandbox::bench
