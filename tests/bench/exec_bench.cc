// exec_bench: what running `true` in a native sandbox costs through our stack, next to the raw
// bwrap command the launcher itself would run, and what the stack holds while sessions idle or
// run many commands. Prints figures and asserts nothing.
//
// This file starts the real daemons on private sockets and runs the selected figures:
// A-E are times (latency_figures.h), F and G resources (resource_figures.h), H the cost of
// resource limits (limits_figure.h: against a second launcher started with --cgroups=off).
//
//   exec_bench --launcherd=PATH --brokerd=PATH --sandboxctl=PATH [--figures=ABCDEFGH]
//              [--warm-runs=200] [--cli-runs=100] [--launch-runs=100] [--idle-sessions=100]
//              [--leak-execs=1000] [--warmup=5] [--diagnose=false] [--workdir=DIR]
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/dashed_flags.h"
#include "broker/cli_spec.h"
#include "grpcpp/grpcpp.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/bench/bench_process.h"
#include "tests/bench/bench_setup.h"
#include "tests/bench/broker_client.h"
#include "tests/bench/latency_figures.h"
#include "tests/bench/limits_figure.h"
#include "tests/bench/raw_bwrap.h"
#include "tests/bench/resource_figures.h"

ABSL_FLAG(std::string, launcherd, "", "path of sandbox_launcherd");
ABSL_FLAG(std::string, cgroups, "auto",
          "the launcher's --cgroups: auto (resource limits where the host has cgroups) or off, "
          "to measure what the limits cost");
ABSL_FLAG(std::string, brokerd, "", "path of sandbox_brokerd");
ABSL_FLAG(std::string, sandboxctl, "", "path of sandboxctl");
ABSL_FLAG(std::string, figures, "ABCDEFGH",
          "which figures to measure, letters A-H, e.g. A,E,F (commas optional; 'all')");
ABSL_FLAG(int, warm_runs, 200,
          "A, D and H: measured Exec calls (and as many of each baseline; H: half as many "
          "Launch calls)");
ABSL_FLAG(int, cli_runs, 100, "B and C: measured sandboxctl runs (and as many raw bwrap runs)");
ABSL_FLAG(int, launch_runs, 100, "E: measured Launch calls (and as many raw bwrap runs)");
ABSL_FLAG(int, idle_sessions, 100, "F: idle sessions launched for the memory figure");
ABSL_FLAG(int, leak_execs, 1000, "G: Execs of `true` in one session for the leak check");
ABSL_FLAG(bool, diagnose, true,
          "D: time the launcher's spawn code in-process; false drops D from --figures");
ABSL_FLAG(std::string, workdir, "",
          "bind this directory (read-write; `true` writes nothing) instead of "
          "an empty temp dir, e.g. a real checkout");
ABSL_FLAG(int, warmup, 5, "unmeasured runs of each kind before each figure");
ABSL_FLAG(bool, filename_denies, true,
          "ours with the full policy (the create guard on the writable bind); false: "
          "writeDenyPatterns: [] (no guard), to isolate the guard's cost");

namespace ccsandbox::bench {
namespace {

constexpr char kAllFigures[] = "ABCDEFGH";

// The figure letters of --figures, in A-H order.
absl::StatusOr<std::string> SelectedFigures(const std::string& flag) {
  if (flag == "all") return std::string(kAllFigures);
  std::set<char> selected;
  for (char c : flag) {
    if (c == ',' || c == ' ') continue;
    const char letter = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (std::string_view(kAllFigures).find(letter) == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--figures: '", flag, "': figures are the letters A-H (or 'all')"));
    }
    selected.insert(letter);
  }
  return std::string(selected.begin(), selected.end());
}

// sandboxctl's default spec (the work tree bound read-write), as `sandboxctl run` sends it.
v1::SandboxSpec BenchSpec(const std::string& workdir, const std::string& session_id) {
  v1::SandboxSpec spec = broker::DefaultSpec(workdir, session_id);
  // The product default enforces the filename-pattern denies on the writable bind at creation
  // time (shim + supervisor per run); --nofilename_denies measures the same without them
  // (`sandboxctl run --no-filename-denies`).
  if (!absl::GetFlag(FLAGS_filename_denies)) {
    spec.mutable_write_deny_patterns()->clear_patterns();
  }
  return spec;
}

// A launcher and a broker on sockets in `dir` (file names prefixed `tag`), and a client of the
// broker; both daemons stop with this.
// A directory tree removed when this goes.
class RemovedAtEnd {
 public:
  explicit RemovedAtEnd(std::string path) : path_(std::move(path)) {}
  RemovedAtEnd(RemovedAtEnd&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  RemovedAtEnd& operator=(RemovedAtEnd&&) = delete;
  ~RemovedAtEnd() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }

 private:
  std::string path_;
};

struct Daemons {
  // The broker's own runtime dir (the default is shared with any other broker of this user and
  // emptied at its boot). The broker removes it at an orderly exit; this covers a killed one.
  RemovedAtEnd runtime_dir;  // first: removed after both daemons have stopped
  Child launcher;
  Child broker;
  std::unique_ptr<v1::SandboxBroker::Stub> stub;
};

absl::StatusOr<Daemons> StartDaemons(const std::string& launcherd, const std::string& brokerd,
                                     const std::string& dir, const std::string& tag,
                                     const std::string& cgroups) {
  const std::string launcher_socket = dir + "/" + tag + "l.sock";
  const std::string broker_socket = dir + "/" + tag + "b.sock";
  const std::string runtime_dir = dir + "." + tag + "run";
  absl::StatusOr<Child> launcher =
      Child::Spawn({.argv = {launcherd, "--socket=" + launcher_socket,
                             absl::StrCat("--allowed-uids=", getuid()), "--cgroups=" + cgroups},
                    .output = dir + "/" + tag + "launcher.log",
                    .die_with_parent = true});
  if (!launcher.ok()) return launcher.status();
  if (absl::Status up = WaitForSocket(launcher_socket, *launcher, dir + "/" + tag + "launcher.log");
      !up.ok()) {
    return up;
  }
  absl::StatusOr<Child> broker =
      Child::Spawn({.argv = {brokerd, "--listen=unix:" + broker_socket,
                             "--launcher=unix:" + launcher_socket, "--runtime-dir=" + runtime_dir},
                    .output = dir + "/" + tag + "broker.log",
                    .die_with_parent = true});
  if (!broker.ok()) return broker.status();
  Daemons daemons{RemovedAtEnd(runtime_dir), *std::move(launcher), *std::move(broker), nullptr};
  const std::string broker_log = dir + "/" + tag + "broker.log";
  if (absl::Status up = WaitForSocket(broker_socket, daemons.broker, broker_log); !up.ok()) {
    return up;
  }
  daemons.stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel("unix:" + broker_socket, grpc::InsecureChannelCredentials()));
  if (absl::Status native = CheckNativeDispatch(*daemons.stub, broker_log); !native.ok()) {
    return native;
  }
  return daemons;
}

absl::Status RunBench() {
  absl::StatusOr<std::string> figures = SelectedFigures(absl::GetFlag(FLAGS_figures));
  if (!figures.ok()) return figures.status();
  if (!absl::GetFlag(FLAGS_diagnose)) std::erase(*figures, 'D');
  absl::StatusOr<std::string> launcherd =
      ExecutableFlag("launcherd", absl::GetFlag(FLAGS_launcherd));
  if (!launcherd.ok()) return launcherd.status();
  absl::StatusOr<std::string> brokerd = ExecutableFlag("brokerd", absl::GetFlag(FLAGS_brokerd));
  if (!brokerd.ok()) return brokerd.status();
  absl::StatusOr<std::string> sandboxctl =
      ExecutableFlag("sandboxctl", absl::GetFlag(FLAGS_sandboxctl));
  if (!sandboxctl.ok()) return sandboxctl.status();

  // Sockets under /tmp (short paths); the workdir elsewhere, since the launcher refuses binds
  // that overlap its socket dir.
  absl::StatusOr<TempDir> sockets = TempDir::Create("/tmp/ccsbench.");
  if (!sockets.ok()) return sockets.status();
  std::optional<TempDir> temp_workdir;
  std::string workdir = absl::GetFlag(FLAGS_workdir);
  if (workdir.empty()) {
    absl::StatusOr<TempDir> created = TempDir::Create("/var/tmp/ccsbench-wd.");
    if (!created.ok()) return created.status();
    temp_workdir.emplace(std::move(*created));
    workdir = temp_workdir->path();
  } else if (char resolved[PATH_MAX]; realpath(workdir.c_str(), resolved)) {
    workdir = resolved;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("--workdir: '", workdir, "' does not exist"));
  }
  const std::string dir = sockets->path();
  const std::string broker_address = "unix:" + dir + "/b.sock";
  const std::string cgroups = absl::GetFlag(FLAGS_cgroups);

  absl::StatusOr<Daemons> daemons = StartDaemons(*launcherd, *brokerd, dir, "", cgroups);
  if (!daemons.ok()) return daemons.status();
  v1::SandboxBroker::Stub* stub = daemons->stub.get();
  // H compares with a second pair whose launcher enforces no limits.
  std::optional<Daemons> unlimited;
  if (figures->find('H') != std::string::npos) {
    absl::StatusOr<Daemons> started = StartDaemons(*launcherd, *brokerd, dir, "off-", "off");
    if (!started.ok()) return started.status();
    unlimited.emplace(*std::move(started));
  }
  BenchSetup setup;
  setup.stub = stub;
  setup.spec = BenchSpec(workdir, absl::StrCat("bench-", getpid()));
  setup.launcher_pid = daemons->launcher.pid();
  setup.broker_pid = daemons->broker.pid();
  setup.warmup = std::max(0, absl::GetFlag(FLAGS_warmup));
  absl::StatusOr<SpawnOptions> raw = RawBwrapCommand(setup.spec);
  if (!raw.ok()) return raw.status();
  setup.raw = *std::move(raw);
  absl::PrintF("exec_bench: raw command:\n  %s\n", absl::StrJoin(setup.raw.argv, " "));

  const int warm_runs = std::max(1, absl::GetFlag(FLAGS_warm_runs));
  const int cli_runs = std::max(1, absl::GetFlag(FLAGS_cli_runs));
  std::vector<std::string> cli_argv = {*sandboxctl, "--broker=" + broker_address, "run"};
  if (!absl::GetFlag(FLAGS_filename_denies)) cli_argv.push_back("--no-filename-denies");
  cli_argv.insert(cli_argv.end(), {"--", "true"});
  const SpawnOptions cli{.argv = cli_argv, .cwd = workdir, .output = dir + "/sandboxctl.out"};
  const SpawnOptions probe{.argv = {*sandboxctl, "--broker=unix:" + dir + "/none.sock", "probe"}};
  const std::vector<std::pair<char, std::function<absl::Status()>>> all = {
      {'A', [&] { return FigureWarm(setup, warm_runs); }},
      {'B', [&] { return FigureCli(setup, cli, cli_runs); }},
      {'C', [&] { return FigureStartup(setup, probe, cli_runs); }},
      {'D', [&] { return FigureDiagnosis(setup, warm_runs); }},
      {'E', [&] { return FigureLaunch(setup, std::max(1, absl::GetFlag(FLAGS_launch_runs))); }},
      {'F', [&] { return FigureMemory(setup, std::max(1, absl::GetFlag(FLAGS_idle_sessions))); }},
      {'G', [&] { return FigureLeaks(setup, std::max(1, absl::GetFlag(FLAGS_leak_execs))); }},
      {'H', [&] { return FigureLimits(setup, *unlimited->stub, warm_runs); }},
  };
  const Clock::time_point bench_start = Clock::now();
  for (const auto& [letter, figure] : all) {
    if (figures->find(letter) == std::string::npos) continue;
    if (g_stop) break;
    absl::PrintF("\n");
    const Clock::time_point start = Clock::now();
    if (absl::Status done = figure(); !done.ok()) {
      return absl::Status(done.code(),
                          absl::StrCat("figure ", std::string(1, letter), ": ", done.message()));
    }
    absl::PrintF("  (%c took %.1f s)\n", letter, MsSince(start) / 1000);
  }
  absl::PrintF("\nexec_bench: figures %s in %.1f s\n", *figures, MsSince(bench_start) / 1000);
  return g_stop ? absl::CancelledError("interrupted") : absl::OkStatus();
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "exec_bench --launcherd=PATH --brokerd=PATH --sandboxctl=PATH [--figures=ABCDEFGH] "
      "[--warm-runs=200] [--cli-runs=100] [--launch-runs=100] [--idle-sessions=100] "
      "[--leak-execs=1000] [--warmup=5] [--diagnose=false] [--workdir=DIR]");
  ParseDashedCommandLine(argc, argv);

  StopOnSignals();

  absl::Status status = RunBench();
  if (!status.ok()) {
    absl::FPrintF(stderr, "exec_bench: %s\n", status.ToString());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace ccsandbox::bench

int main(int argc, char** argv) { return ccsandbox::bench::Main(argc, argv); }
