// microvm_bench: what a microvm session costs next to a native one, measured in the same run
// against the same daemons (issue 20's benchmark): a cold Launch until the session is warm,
// Exec of `true` in a warm session, and the resident memory a warm idle session adds to the
// host. Prints figures (and @row lines for scripts/bench.sh) and asserts nothing.
//
//   microvm_bench --launcherd=PATH --brokerd=PATH --agent=PATH [--image-dir=DIR]
//                 [--launches=5] [--execs=50]
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/dashed_flags.h"
#include "grpcpp/grpcpp.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/bench/bench_process.h"
#include "tests/bench/bench_stats.h"
#include "tests/bench/bench_table.h"
#include "tests/bench/broker_client.h"

ABSL_FLAG(std::string, launcherd, "", "path of sandbox_launcherd");
ABSL_FLAG(std::string, brokerd, "", "path of sandbox_brokerd");
ABSL_FLAG(std::string, agent, "", "path of the in-guest agent (ccsandbox_agent)");
ABSL_FLAG(std::string, image_dir, "/var/cache/ccsandbox/microvm",
          "scripts/microvm-image.sh's directory: vmlinuz, probe-initrd.img, agent-initrd.img");
ABSL_FLAG(int, launches, 5, "cold Launches of each backend (each followed by its Destroy)");
ABSL_FLAG(int, execs, 50, "Execs of `true` in one warm session of each backend");

namespace ccsandbox::bench {
namespace {

constexpr char kQemu[] = "/usr/bin/qemu-system-x86_64";

v1::SandboxSpec Spec(const std::string& id) {
  v1::SandboxSpec spec;
  spec.set_session_id(id);
  spec.set_mode("chat");
  spec.set_network_enabled(false);
  return spec;
}

absl::StatusOr<double> TimeLaunch(v1::SandboxBroker::Stub& stub, const std::string& backend,
                                  const std::string& id) {
  v1::LaunchRequest request;
  request.set_backend(backend);
  *request.mutable_spec() = Spec(id);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(90));
  v1::SandboxHandle handle;
  const Clock::time_point start = Clock::now();
  const grpc::Status status = stub.Launch(&context, request, &handle);
  const double ms = MsSince(start);
  if (!status.ok()) {
    return absl::UnavailableError(absl::StrCat("Launch ", backend, ": ", status.error_message()));
  }
  if (handle.state() != v1::SANDBOX_STATE_WARM) {
    return absl::InternalError(absl::StrCat("Launch ", backend, ": the session is not warm"));
  }
  return ms;
}

// VmRSS (KiB) of every process now below `ancestor` (the launcher: the sandboxes and, in
// them, the hypervisors), by pid.
std::map<int, long> ResidentKibBelow(int ancestor) {
  std::map<int, int> parent;
  std::map<int, long> rss;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
    const size_t paren = stat.rfind(')');
    std::vector<std::string> fields = absl::StrSplit(
        paren == std::string::npos ? "" : stat.substr(paren + 2), ' ', absl::SkipEmpty());
    if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &parent[pid])) continue;
    for (absl::string_view line :
         absl::StrSplit(ReadFile(absl::StrCat("/proc/", pid, "/status")), '\n')) {
      if (!absl::ConsumePrefix(&line, "VmRSS:")) continue;
      long kib = 0;
      std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipWhitespace());
      if (!parts.empty() && absl::SimpleAtoi(parts[0], &kib)) rss[pid] = kib;
    }
  }
  std::map<int, long> below;
  for (const auto& [pid, kib] : rss) {
    for (int up = parent[pid], hops = 0; up > 1 && hops < 64; up = parent[up], ++hops) {
      if (up == ancestor) {
        below[pid] = kib;
        break;
      }
    }
  }
  return below;
}

// The resident memory (MiB) of the processes a warm idle session of `backend` added below the
// launcher (its sandbox; for microvm the hypervisor in it).
absl::StatusOr<double> IdleSessionMib(v1::SandboxBroker::Stub& stub, const std::string& backend,
                                      int launcher) {
  const std::map<int, long> before = ResidentKibBelow(launcher);
  const std::string id = absl::StrCat("rss-", backend, "-", getpid());
  absl::StatusOr<double> launched = TimeLaunch(stub, backend, id);
  if (!launched.ok()) return launched.status();
  usleep(2 * 1000 * 1000);  // idle
  long added = 0;
  for (const auto& [pid, kib] : ResidentKibBelow(launcher)) {
    if (before.count(pid) == 0) added += kib;
  }
  if (absl::Status destroyed = Destroy(stub, id); !destroyed.ok()) return destroyed;
  return added / 1024.0;
}

absl::Status RunBench() {
  absl::StatusOr<std::string> launcherd =
      ExecutableFlag("launcherd", absl::GetFlag(FLAGS_launcherd));
  if (!launcherd.ok()) return launcherd.status();
  absl::StatusOr<std::string> brokerd = ExecutableFlag("brokerd", absl::GetFlag(FLAGS_brokerd));
  if (!brokerd.ok()) return brokerd.status();
  absl::StatusOr<std::string> agent = ExecutableFlag("agent", absl::GetFlag(FLAGS_agent));
  if (!agent.ok()) return agent.status();
  const std::string images = absl::GetFlag(FLAGS_image_dir);
  absl::StatusOr<TempDir> dir = TempDir::Create("/tmp/ccsvm.");
  if (!dir.ok()) return dir.status();
  // Apart from the daemons' sockets: the launcher refuses binds near its socket directory.
  absl::StatusOr<TempDir> state = TempDir::Create("/tmp/ccsvm-state.");
  if (!state.ok()) return state.status();
  const std::string launcher_socket = dir->path() + "/l.sock";
  const std::string broker_socket = dir->path() + "/b.sock";
  absl::StatusOr<Child> launcher =
      Child::Spawn({.argv = {*launcherd, "--socket=" + launcher_socket,
                             absl::StrCat("--allowed-uids=", getuid())},
                    .output = dir->path() + "/launcher.log",
                    .die_with_parent = true});
  if (!launcher.ok()) return launcher.status();
  if (absl::Status up = WaitForSocket(launcher_socket, *launcher, dir->path() + "/launcher.log");
      !up.ok()) {
    return up;
  }
  const std::string broker_log = dir->path() + "/broker.log";
  absl::StatusOr<Child> broker = Child::Spawn(
      {.argv = {*brokerd, "--listen=unix:" + broker_socket, "--launcher=unix:" + launcher_socket,
                "--runtime-dir=" + dir->path() + ".run",
                absl::StrCat("--microvm-hypervisor=", kQemu),
                "--microvm-kernel=" + images + "/vmlinuz",
                "--microvm-initrd=" + images + "/probe-initrd.img", "--microvm-accel=tcg",
                "--microvm-boot-timeout=30s", "--microvm-agent=" + *agent,
                "--microvm-state-dir=" + state->path() + "/vm"},
       .output = broker_log,
       .die_with_parent = true});
  if (!broker.ok()) return broker.status();
  // The broker probe-boots before it listens.
  for (int i = 0; i < 6 && !std::filesystem::exists(broker_socket); ++i) sleep(1);
  if (absl::Status up = WaitForSocket(broker_socket, *broker, broker_log); !up.ok()) return up;
  std::unique_ptr<v1::SandboxBroker::Stub> stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel("unix:" + broker_socket, grpc::InsecureChannelCredentials()));
  absl::PrintF(
      "microvm_bench: qemu under tcg (the session's hypervisor runs in its native "
      "sandbox, which has no /dev/kvm); %d CPUs, load %s",
      sysconf(_SC_NPROCESSORS_ONLN), ReadFile("/proc/loadavg"));

  // Cold Launch to warm, the two backends in turn.
  std::map<std::string, std::vector<double>> launch_ms;
  const int launches = std::max(1, absl::GetFlag(FLAGS_launches));
  for (int i = 0; i < launches && !g_stop; ++i) {
    for (const std::string backend : {"native", "microvm"}) {
      const std::string id = absl::StrCat("cold-", backend, "-", i);
      absl::StatusOr<double> ms = TimeLaunch(*stub, backend, id);
      if (!ms.ok())
        return absl::Status(ms.status().code(),
                            absl::StrCat(ms.status().message(), "\n", Tail(broker_log)));
      launch_ms[backend].push_back(*ms);
      if (absl::Status destroyed = Destroy(*stub, id); !destroyed.ok()) return destroyed;
    }
  }
  const Summary native_launch = Summarize(launch_ms["native"]);
  const Summary vm_launch = Summarize(launch_ms["microvm"]);
  absl::PrintF(
      "cold Launch until warm (median / p90 of %d): microvm %.0f / %.0f ms, native "
      "%.0f / %.0f ms\n",
      launches, vm_launch.median, vm_launch.p90, native_launch.median, native_launch.p90);
  ReportRow({.figure = "microvm: cold Launch to warm, median",
             .ours = vm_launch.median,
             .unit = "ms",
             .baseline_name = "native Launch",
             .baseline = native_launch.median});

  // Exec of `true` in a warm session of each backend.
  std::map<std::string, std::vector<double>> exec_ms;
  const int execs = std::max(1, absl::GetFlag(FLAGS_execs));
  for (const std::string backend : {"native", "microvm"}) {
    const std::string id = absl::StrCat("warm-", backend);
    absl::StatusOr<double> launched = TimeLaunch(*stub, backend, id);
    if (!launched.ok()) return launched.status();
    v1::ExecRequest request;
    request.set_session_id(id);
    request.add_argv("true");
    for (int i = 0; i < execs + 3 && !g_stop; ++i) {
      absl::StatusOr<ExecTiming> timing = TimeExec(*stub, request);
      if (!timing.ok()) return timing.status();
      if (i >= 3) exec_ms[backend].push_back(timing->end);  // 3 unmeasured first
    }
    if (absl::Status destroyed = Destroy(*stub, id); !destroyed.ok()) return destroyed;
  }
  const Summary native_exec = Summarize(exec_ms["native"]);
  const Summary vm_exec = Summarize(exec_ms["microvm"]);
  absl::PrintF(
      "Exec of `true` in a warm session (median / p90 of %d): microvm %.1f / %.1f ms, "
      "native %.1f / %.1f ms\n",
      execs, vm_exec.median, vm_exec.p90, native_exec.median, native_exec.p90);
  ReportRow({.figure = "microvm: Exec true in a warm session, median",
             .ours = vm_exec.median,
             .unit = "ms",
             .baseline_name = "native warm Exec",
             .baseline = native_exec.median});

  // What an idle warm session holds.
  absl::StatusOr<double> native_mib = IdleSessionMib(*stub, "native", launcher->pid());
  if (!native_mib.ok()) return native_mib.status();
  absl::StatusOr<double> vm_mib = IdleSessionMib(*stub, "microvm", launcher->pid());
  if (!vm_mib.ok()) return vm_mib.status();
  absl::PrintF("resident memory an idle warm session adds: microvm %.1f MiB, native %.1f MiB\n",
               *vm_mib, *native_mib);
  ReportRow({.figure = "microvm: RSS an idle warm session adds",
             .ours = *vm_mib,
             .unit = "MiB",
             .baseline_name = "native session",
             .baseline = *native_mib});
  return g_stop ? absl::CancelledError("interrupted") : absl::OkStatus();
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "microvm_bench --launcherd=PATH --brokerd=PATH --agent=PATH [--image-dir=DIR] "
      "[--launches=5] [--execs=50]");
  ParseDashedCommandLine(argc, argv);
  StopOnSignals();
  if (absl::Status status = RunBench(); !status.ok()) {
    absl::FPrintF(stderr, "microvm_bench: %s\n", status.ToString());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace ccsandbox::bench

int main(int argc, char** argv) { return ccsandbox::bench::Main(argc, argv); }
