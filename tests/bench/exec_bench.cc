// exec_bench: what running `true` in a native sandbox costs through our stack,
// next to the raw bwrap command the launcher itself would run. Prints figures
// and asserts nothing.
//
//   A  warm path: this process, one long-lived gRPC client, launches one
//      session and calls Exec(argv=["true"]) N times.
//   B  CLI path: `sandboxctl --broker=unix:... run -- true`, a new process
//      each time.
//   C  sandboxctl start-up alone (probe against a missing socket, no RPC).
//   D  diagnosis of A: the launcher's own SandboxProcess::Spawn + Supervise
//      called in this process (no RPC), and one unary RPC to the broker.
//
// The raw side is the bwrap argv the launcher's own policy code renders
// (BuildLaunchPlan + RenderBwrapArgv over the real file system), started with
// posix_spawn and waited for. Ours and raw alternate run by run, so drift on
// the host hits both alike.
//
//   exec_bench --launcherd=PATH --brokerd=PATH --sandboxctl=PATH
//              [--warm-runs=200] [--cli-runs=100] [--warmup=5]
//              [--diagnose=false] [--workdir=DIR]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/dashed_flags.h"
#include "base/real_host_view.h"
#include "broker/deny_scan.h"
#include "grpcpp/grpcpp.h"
#include "launcher/run_control.h"
#include "launcher/run_supervisor.h"
#include "launcher/sandbox_process.h"
#include "policy/plan/bwrap_argv.h"
#include "policy/plan/deny_sets.h"
#include "policy/plan/env_scrub.h"
#include "policy/plan/launch_plan.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/bench/bench_process.h"

ABSL_FLAG(std::string, launcherd, "", "path of sandbox_launcherd");
ABSL_FLAG(std::string, brokerd, "", "path of sandbox_brokerd");
ABSL_FLAG(std::string, sandboxctl, "", "path of sandboxctl");
ABSL_FLAG(int, warm_runs, 200, "A: measured Exec calls (and as many raw bwrap runs)");
ABSL_FLAG(int, cli_runs, 100, "B and C: measured sandboxctl runs (and as many raw bwrap runs)");
ABSL_FLAG(bool, diagnose, true, "D: also time the launcher's spawn code in-process");
ABSL_FLAG(std::string, workdir, "",
          "bind this directory (read-write; `true` writes nothing) instead of "
          "an empty temp dir, e.g. a real checkout");
ABSL_FLAG(int, warmup, 5, "unmeasured runs of each kind before each figure");
ABSL_FLAG(bool, filename_denies, true,
          "ours with the full policy (the create guard on the writable bind); false: "
          "writeDenyPatterns: [] (no guard), to isolate the guard's cost");

extern char** environ;

namespace ccsandbox::bench {
namespace {

// Runs a command to completion; its wall time in ms, or an error unless it
// exited 0.
absl::StatusOr<double> TimeCommand(const SpawnOptions& options) {
  const Clock::time_point start = Clock::now();
  absl::StatusOr<Child> child = Child::Spawn(options);
  if (!child.ok()) return child.status();
  absl::StatusOr<int> status = child->Wait();
  const double ms = MsSince(start);
  if (!status.ok()) return status.status();
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return absl::InternalError(absl::StrCat(options.argv[0], " ended with wait status ", *status,
                                            " (output: ", options.output, ")"));
  }
  return ms;
}

struct Summary {
  double median = 0;
  double p90 = 0;
};

Summary Summarize(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  Summary s;
  s.median = n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  s.p90 = samples[static_cast<size_t>(std::ceil(0.9 * n)) - 1];  // nearest rank
  return s;
}

void PrintComparison(const std::string& title, const std::vector<double>& ours,
                     const std::vector<double>& raw, double target) {
  const Summary o = Summarize(ours);
  const Summary r = Summarize(raw);
  absl::PrintF("%s (N=%d each)\n", title, ours.size());
  absl::PrintF("  %-12s %9s %9s\n", "", "median", "p90");
  absl::PrintF("  %-12s %6.2f ms %6.2f ms\n", "ours", o.median, o.p90);
  absl::PrintF("  %-12s %6.2f ms %6.2f ms\n", "raw bwrap", r.median, r.p90);
  absl::PrintF("  %-12s %9.2f %9.2f   target <= %.1f (medians): %s\n", "ours/raw",
               o.median / r.median, o.p90 / r.p90, target,
               o.median / r.median <= target ? "met" : "NOT met");
}

std::map<std::string, std::string> HostEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

v1::SandboxSpec BenchSpec(const std::string& workdir, const std::string& session_id) {
  v1::SandboxSpec spec;
  spec.set_session_id(session_id);
  v1::SandboxBindMount* bind = spec.add_bind_mounts();
  bind->set_host_path(workdir);
  bind->set_guest_path(workdir);
  spec.set_guest_workdir(workdir);
  // The product default enforces the filename-pattern denies on the writable
  // bind at creation time (shim + supervisor per run); --nofilename_denies
  // measures the same without them (`sandboxctl run --no-filename-denies`).
  if (!absl::GetFlag(FLAGS_filename_denies)) {
    spec.mutable_write_deny_patterns()->clear_patterns();
  }
  return spec;
}

// The command the launcher would run for Exec(["true"]) in `spec`: same plan,
// argv and scrubbed environment, rendered by the launcher's own code.
absl::StatusOr<SpawnOptions> RawBwrapCommand(const v1::SandboxSpec& spec) {
  const std::map<std::string, std::string> host_env = HostEnvironment();
  auto path = host_env.find("PATH");
  std::optional<std::string> bwrap =
      launcher::FindExecutable("bwrap", path == host_env.end() ? "/usr/bin:/bin" : path->second);
  if (!bwrap.has_value()) {
    return absl::FailedPreconditionError(
        "bwrap not found on PATH; install: apt-get install bubblewrap socat");
  }
  v1::ExecRequest exec;
  exec.add_argv("true");
  policy::PlanInputs inputs;
  inputs.spec = &spec;
  inputs.backend = v1::SANDBOX_BACKEND_NATIVE;
  inputs.exec = &exec;
  inputs.run_id = "bench-raw";
  inputs.base_env = policy::DefaultEnvironment(v1::SANDBOX_BACKEND_NATIVE, host_env);
  absl::StatusOr<v1::LaunchPlan> plan = policy::BuildLaunchPlan(inputs);
  if (!plan.ok()) return plan.status();
  // The deny paths the broker resolves at Launch (BrokerService::ResolveDenyPaths).
  broker::ScanRequest scan_request;
  scan_request.mounts.assign(plan->mounts().begin(), plan->mounts().end());
  scan_request.home_dirs = broker::CurrentHomeDirs();
  absl::StatusOr<policy::DenyScan> scan = broker::ScanForDenyPaths(scan_request);
  if (!scan.ok()) return scan.status();
  policy::DenyPaths deny = policy::ResolveDenyPaths(*scan, RealPathResolver());
  for (std::string& p : deny.read) plan->add_deny_read_paths(std::move(p));
  for (std::string& p : deny.write) plan->add_deny_write_paths(std::move(p));
  policy::BwrapConfig config{*bwrap, policy::DefaultSystemRoDirs()};
  absl::StatusOr<std::vector<std::string>> argv =
      policy::RenderBwrapArgv(*plan, config, RealHostView());
  if (!argv.ok()) return argv.status();

  std::map<std::string, std::string> env(plan->env().begin(), plan->env().end());
  policy::ScrubEnvironment(env);
  SpawnOptions options;
  options.argv = std::move(*argv);
  for (const auto& [name, value] : env) options.envp.push_back(absl::StrCat(name, "=", value));
  return options;
}

// Client-side times of one Exec, in ms from the call.
struct ExecTiming {
  double starting = 0;  // first event: broker + launcher accepted the run
  double ready = 0;     // bwrap exec'd
  double exit = 0;      // exit event
  double end = 0;       // stream finished
};

absl::StatusOr<ExecTiming> TimeExec(v1::SandboxBroker::Stub& stub, const v1::ExecRequest& request) {
  ExecTiming timing;
  const Clock::time_point start = Clock::now();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader = stub.Exec(&context, request);
  v1::SandboxEvent event;
  int exit_code = -1;
  while (reader->Read(&event)) {
    if (event.has_starting()) timing.starting = MsSince(start);
    if (event.has_ready()) timing.ready = MsSince(start);
    if (event.has_exit()) {
      timing.exit = MsSince(start);
      exit_code = event.exit().exit_code();
    }
  }
  grpc::Status status = reader->Finish();
  timing.end = MsSince(start);
  if (!status.ok()) return absl::InternalError(absl::StrCat("Exec: ", status.error_message()));
  if (exit_code != 0) return absl::InternalError(absl::StrCat("Exec: `true` exited ", exit_code));
  return timing;
}

class DiscardSink : public launcher::EventSink {
 public:
  bool Emit(const v1::SandboxEvent&) override { return true; }
  bool Cancelled() override { return false; }
};

// The launcher's code for one native run minus gRPC: Spawn (fork ... execve of
// bwrap), then Supervise (poll loop to exit and EOF). {spawn ms, total ms}.
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

// Alternates `ours` and `raw`: `warmup` unmeasured pairs, then `runs` pairs.
absl::Status Alternate(int warmup, int runs, const std::function<absl::StatusOr<double>()>& ours,
                       const std::function<absl::StatusOr<double>()>& raw,
                       std::vector<double>& ours_ms, std::vector<double>& raw_ms) {
  for (int i = 0; i < warmup + runs && !g_stop; ++i) {
    absl::StatusOr<double> a = ours();
    if (!a.ok()) return a.status();
    absl::StatusOr<double> b = raw();
    if (!b.ok()) return b.status();
    if (i >= warmup) {
      ours_ms.push_back(*a);
      raw_ms.push_back(*b);
    }
  }
  return g_stop ? absl::CancelledError("interrupted") : absl::OkStatus();
}

// Comparing with raw bwrap only means something when the broker runs natively.
absl::Status CheckNativeDispatch(v1::SandboxBroker::Stub& stub, const std::string& broker_log) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  context.set_wait_for_ready(true);
  v1::ProbeResponse probe;
  grpc::Status status = stub.Probe(&context, v1::ProbeRequest(), &probe);
  if (!status.ok()) {
    return absl::UnavailableError(absl::StrCat("broker Probe: ", status.error_message(),
                                               "; broker log:\n", Tail(broker_log)));
  }
  if (probe.dispatch_backend() != v1::SANDBOX_BACKEND_NATIVE) {
    return absl::FailedPreconditionError(
        absl::StrCat("the broker would not run natively here: ", probe.status_line()));
  }
  return absl::OkStatus();
}

struct Runs {
  int warmup = 0;  // unmeasured pairs before each figure
  int warm = 0;    // A and D
  int cli = 0;     // B and C
};

absl::Status Launch(v1::SandboxBroker::Stub& stub, const v1::SandboxSpec& spec) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::LaunchRequest launch;
  *launch.mutable_spec() = spec;
  launch.set_backend("native");
  v1::SandboxHandle handle;
  grpc::Status status = stub.Launch(&context, launch, &handle);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("Launch: ", status.error_message()));
  }
  return absl::OkStatus();
}

void Destroy(v1::SandboxBroker::Stub& stub, const std::string& session_id) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::SessionRequest destroy;
  destroy.set_session_id(session_id);
  v1::SandboxHandle handle;
  (void)stub.Destroy(&context, destroy, &handle);
}

absl::Status FigureWarm(v1::SandboxBroker::Stub& stub, const v1::SandboxSpec& spec,
                        const SpawnOptions& raw, const Runs& runs) {
  if (absl::Status launched = Launch(stub, spec); !launched.ok()) {
    return launched;
  }
  v1::ExecRequest exec;
  exec.set_session_id(spec.session_id());
  exec.add_argv("true");
  std::vector<ExecTiming> timings;
  auto ours = [&]() -> absl::StatusOr<double> {
    absl::StatusOr<ExecTiming> timing = TimeExec(stub, exec);
    if (!timing.ok()) return timing.status();
    timings.push_back(*timing);
    return timing->end;
  };
  std::vector<double> ours_ms, raw_ms;
  absl::Status done = Alternate(
      runs.warmup, runs.warm, ours, [&] { return TimeCommand(raw); }, ours_ms, raw_ms);
  Destroy(stub, spec.session_id());
  if (!done.ok()) return done;

  PrintComparison("A  warm path: Exec([\"true\"]) on one session, vs raw bwrap", ours_ms, raw_ms,
                  1.3);
  std::vector<double> starting, ready, exit;
  for (size_t i = runs.warmup; i < timings.size(); ++i) {
    starting.push_back(timings[i].starting);
    ready.push_back(timings[i].ready);
    exit.push_back(timings[i].exit);
  }
  absl::PrintF(
      "  ours, median ms from the call to each event: starting %.2f, "
      "ready %.2f, exit %.2f, stream end %.2f\n",
      Summarize(starting).median, Summarize(ready).median, Summarize(exit).median,
      Summarize(ours_ms).median);
  return absl::OkStatus();
}

absl::Status FigureCli(const SpawnOptions& cli, const SpawnOptions& raw, const Runs& runs) {
  std::vector<double> ours_ms, raw_ms;
  absl::Status done = Alternate(
      runs.warmup, runs.cli, [&] { return TimeCommand(cli); }, [&] { return TimeCommand(raw); },
      ours_ms, raw_ms);
  if (!done.ok()) return done;
  PrintComparison("B  CLI path: `sandboxctl run -- true`, vs raw bwrap", ours_ms, raw_ms, 2.5);
  return absl::OkStatus();
}

absl::Status FigureStartup(const SpawnOptions& probe, const Runs& runs) {
  std::vector<double> samples;
  for (int i = 0; i < runs.warmup + runs.cli && !g_stop; ++i) {
    const Clock::time_point start = Clock::now();
    absl::StatusOr<Child> child = Child::Spawn(probe);
    if (!child.ok()) return child.status();
    (void)child->Wait();  // exits 125: there is no broker at that socket
    if (i >= runs.warmup) samples.push_back(MsSince(start));
  }
  const Summary s = Summarize(samples);
  absl::PrintF("C  sandboxctl start-up alone, no RPC (N=%d)\n", samples.size());
  absl::PrintF("  median %.2f ms, p90 %.2f ms\n", s.median, s.p90);
  return absl::OkStatus();
}

absl::Status FigureDiagnosis(v1::SandboxBroker::Stub& stub, const SpawnOptions& raw,
                             const Runs& runs) {
  std::vector<double> spawn_ms, ours_ms, raw_ms;
  auto ours = [&]() -> absl::StatusOr<double> {
    absl::StatusOr<std::pair<double, double>> t = TimeLauncherSpawn(raw);
    if (!t.ok()) return t.status();
    spawn_ms.push_back(t->first);
    return t->second;
  };
  absl::Status done = Alternate(
      runs.warmup, runs.warm, ours, [&] { return TimeCommand(raw); }, ours_ms, raw_ms);
  if (!done.ok()) return done;
  PrintComparison("D  launcher's Spawn + Supervise in this process, no RPC, vs raw bwrap", ours_ms,
                  raw_ms, 1.3);
  spawn_ms.erase(spawn_ms.begin(), spawn_ms.begin() + runs.warmup);
  absl::PrintF("  SandboxProcess::Spawn (fork .. execve of bwrap): median %.2f ms\n",
               Summarize(spawn_ms).median);

  std::vector<double> probe_ms;
  for (int i = 0; i < runs.warmup + runs.warm && !g_stop; ++i) {
    const Clock::time_point start = Clock::now();
    grpc::ClientContext context;
    v1::ProbeResponse probe;
    grpc::Status status = stub.Probe(&context, v1::ProbeRequest(), &probe);
    if (!status.ok()) {
      return absl::InternalError(absl::StrCat("Probe: ", status.error_message()));
    }
    if (i >= runs.warmup) probe_ms.push_back(MsSince(start));
  }
  absl::PrintF("  one unary RPC to the broker (Probe): median %.2f ms\n",
               Summarize(probe_ms).median);
  return absl::OkStatus();
}

absl::Status RunBench() {
  absl::StatusOr<std::string> launcherd =
      ExecutableFlag("launcherd", absl::GetFlag(FLAGS_launcherd));
  if (!launcherd.ok()) return launcherd.status();
  absl::StatusOr<std::string> brokerd = ExecutableFlag("brokerd", absl::GetFlag(FLAGS_brokerd));
  if (!brokerd.ok()) return brokerd.status();
  absl::StatusOr<std::string> sandboxctl =
      ExecutableFlag("sandboxctl", absl::GetFlag(FLAGS_sandboxctl));
  if (!sandboxctl.ok()) return sandboxctl.status();
  const Runs runs{std::max(0, absl::GetFlag(FLAGS_warmup)),
                  std::max(1, absl::GetFlag(FLAGS_warm_runs)),
                  std::max(1, absl::GetFlag(FLAGS_cli_runs))};

  // Sockets under /tmp (short paths); the workdir elsewhere, since the
  // launcher refuses binds that overlap its socket dir.
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

  absl::StatusOr<Child> launcher =
      Child::Spawn({.argv = {*launcherd, "--socket=" + dir + "/l.sock",
                             absl::StrCat("--allowed-uids=", getuid())},
                    .output = dir + "/launcher.log",
                    .die_with_parent = true});
  if (!launcher.ok()) return launcher.status();
  if (absl::Status up = WaitForSocket(dir + "/l.sock", *launcher, dir + "/launcher.log");
      !up.ok()) {
    return up;
  }
  absl::StatusOr<Child> broker = Child::Spawn(
      {.argv = {*brokerd, "--listen=" + broker_address, "--launcher=unix:" + dir + "/l.sock"},
       .output = dir + "/broker.log",
       .die_with_parent = true});
  if (!broker.ok()) return broker.status();
  if (absl::Status up = WaitForSocket(dir + "/b.sock", *broker, dir + "/broker.log"); !up.ok()) {
    return up;
  }

  std::unique_ptr<v1::SandboxBroker::Stub> stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel(broker_address, grpc::InsecureChannelCredentials()));
  if (absl::Status native = CheckNativeDispatch(*stub, dir + "/broker.log"); !native.ok()) {
    return native;
  }
  const v1::SandboxSpec spec = BenchSpec(workdir, absl::StrCat("bench-", getpid()));
  absl::StatusOr<SpawnOptions> raw = RawBwrapCommand(spec);
  if (!raw.ok()) return raw.status();
  absl::PrintF("exec_bench: raw command:\n  %s\n\n", absl::StrJoin(raw->argv, " "));

  if (absl::Status a = FigureWarm(*stub, spec, *raw, runs); !a.ok()) return a;
  absl::PrintF("\n");
  std::vector<std::string> cli_argv = {*sandboxctl, "--broker=" + broker_address, "run"};
  if (!absl::GetFlag(FLAGS_filename_denies)) cli_argv.push_back("--no-filename-denies");
  cli_argv.insert(cli_argv.end(), {"--", "true"});
  const SpawnOptions cli{.argv = cli_argv, .cwd = workdir, .output = dir + "/sandboxctl.out"};
  if (absl::Status b = FigureCli(cli, *raw, runs); !b.ok()) return b;
  absl::PrintF("\n");
  const SpawnOptions probe{.argv = {*sandboxctl, "--broker=unix:" + dir + "/none.sock", "probe"}};
  if (absl::Status c = FigureStartup(probe, runs); !c.ok()) return c;
  if (absl::GetFlag(FLAGS_diagnose)) {
    absl::PrintF("\n");
    if (absl::Status d = FigureDiagnosis(*stub, *raw, runs); !d.ok()) return d;
  }
  return g_stop ? absl::CancelledError("interrupted") : absl::OkStatus();
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "exec_bench --launcherd=PATH --brokerd=PATH --sandboxctl=PATH "
      "[--warm-runs=200] [--cli-runs=100] [--warmup=5] [--diagnose=false] "
      "[--workdir=DIR]");
  std::vector<std::string> args = UnderscoreFlagNames(argc, argv);
  std::vector<char*> arg_ptrs;
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  absl::ParseCommandLine(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());

  signal(SIGPIPE, SIG_IGN);
  struct sigaction stop = {};
  stop.sa_handler = OnStopSignal;
  sigaction(SIGINT, &stop, nullptr);
  sigaction(SIGTERM, &stop, nullptr);

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
