// egress_bench: what egress costs a sandboxed command through the real product path, next to a
// direct loopback connection on the host. Prints figures and asserts nothing.
//
// The real sandbox_launcherd and sandbox_brokerd run on private sockets; the broker resolves
// upstream.test -> 127.0.0.1 from a hosts file (--egress-hosts-file) and one native session
// (review mode, a read-only work tree) allows exactly upstream.test:PORT. The client
// (egress_bench_client, copied into the work tree) runs inside the sandbox through Exec: its
// connections go 127.0.0.1:3128 / :1080 -> the shim's bridge -> the session's Unix sockets ->
// the broker's proxies -> the upstream (egress_bench_client --mode=upstream, its own process).
// The direct side is the same client on the host, connecting to the upstream itself.
//
//   1  bulk download: direct vs HTTP CONNECT vs SOCKS5 through the bridge (MB/s, ratio), with
//      each process's CPU seconds
//   2  tunnels opened per second by 16 concurrent clients, and the added time to first byte
//      (connect + handshake + 1 byte echoed; median, p90)
//   3  broker memory (VmRSS): per idle session (200 Launches) and per open tunnel (500 held
//      through the bridge)
// With --diagnose (default) figures 1 and 2 also show the broker's proxy reached from the host
// through the session's Unix socket: the same proxy without the bridge.
//
// This file starts the upstream and the daemons, checks the chain once, and runs the selected
// figures: 1 and 2 in egress_traffic_figures.h, 3 in egress_memory_figure.h.
//
//   egress_bench --launcherd=PATH --brokerd=PATH --sandboxctl=PATH --client=PATH
//                [--figures=123] [--bulk-mib=2048] [--bulk-runs=3] [--rate-seconds=3]
//                [--ttfb-runs=2000] [--idle-sessions=200] [--open-tunnels=500]
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/dashed_flags.h"
#include "grpcpp/grpcpp.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/bench/bench_process.h"
#include "tests/bench/broker_client.h"
#include "tests/bench/egress_bench_session.h"
#include "tests/bench/egress_memory_figure.h"
#include "tests/bench/egress_traffic_figures.h"
#include "tests/bench/proc_cpu.h"

ABSL_FLAG(std::string, launcherd, "", "path of sandbox_launcherd");
ABSL_FLAG(std::string, brokerd, "", "path of sandbox_brokerd");
ABSL_FLAG(std::string, sandboxctl, "", "path of sandboxctl");
ABSL_FLAG(std::string, client, "", "path of egress_bench_client");
ABSL_FLAG(std::string, figures, "123", "which figures to measure (digits 1-3)");
ABSL_FLAG(int, bulk_mib, 2048, "1: MiB per bulk transfer");
ABSL_FLAG(int, bulk_runs, 3, "1: transfers per path (alternating; best and median are reported)");
ABSL_FLAG(std::vector<std::string>, bulk_read_kib, std::vector<std::string>({"1024", "64"}),
          "1: client read sizes, KiB (1024: a greedy reader; 64: a typical client buffer)");
ABSL_FLAG(double, rate_seconds, 3.0, "2: seconds per tunnel-rate measurement");
ABSL_FLAG(int, rate_clients, 16, "2: concurrent clients for the tunnel rate");
ABSL_FLAG(int, ttfb_runs, 2000, "2: sequential connections for the time to first byte");
ABSL_FLAG(int, idle_sessions, 200, "3: sessions for the idle-session memory figure");
ABSL_FLAG(int, open_tunnels, 500,
          "3: tunnels for the per-tunnel memory figure (a session's proxies take 1024 connections "
          "at most)");
ABSL_FLAG(bool, diagnose, true,
          "1, 2: also measure the broker's proxy from the host through its Unix socket");

namespace ccsandbox::bench {
namespace {

// The CLI path once, with a spec file, as a check that the whole chain works before measuring.
absl::Status Preflight(EgressBench& b) {
  const std::string spec = b.dir + "/spec.json";
  std::ofstream(spec) << absl::StrCat(R"({"mode": "review", "bindMounts": [{"hostPath": ")",
                                      b.workdir, R"(", "guestPath": ")", b.workdir,
                                      R"(", "readOnly": true}], "guestWorkdir": ")", b.workdir,
                                      R"(", "egressAllowlist": [")", b.target, R"("]})");
  const std::string output = b.dir + "/preflight.out";
  absl::StatusOr<Child> child =
      Child::Spawn({.argv = {b.sandboxctl, "--broker=" + b.broker_address, "run", "--spec=" + spec,
                             "--json", "--timeout=60", "--", b.guest_client, "--mode=ttfb",
                             "--via=connect", "--runs=20", "--target=" + b.target},
                    .cwd = b.workdir,
                    .output = output});
  if (!child.ok()) return child.status();
  const int status = child->Wait().value_or(-1);
  // stdout is base64 in the JSON events.
  const std::string json = ReadFile(output);
  const std::string key = "\"stdout\":\"";
  std::string stdout_text;
  for (size_t at = json.find(key); at != std::string::npos; at = json.find(key, at + 1)) {
    const size_t begin = at + key.size();
    std::string chunk;
    absl::Base64Unescape(json.substr(begin, json.find('"', begin) - begin), &chunk);
    stdout_text += chunk;
  }
  absl::StatusOr<Fields> result = ParseResult(stdout_text);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !result.ok()) {
    return absl::InternalError(absl::StrCat("preflight `sandboxctl run --spec=", spec,
                                            " --json -- egress_bench_client ...` failed:\n", json,
                                            "\nbroker log:\n", Tail(b.dir + "/broker.log")));
  }
  absl::PrintF(
      "preflight: sandboxctl run --spec --json: %s CONNECT tunnels through the bridge, median %.0f "
      "us\n\n",
      (*result)["n"], ResultNumber(*result, "median_us"));
  return absl::OkStatus();
}

absl::Status RunBench() {
  EgressBench b;
  absl::StatusOr<std::string> launcherd =
      ExecutableFlag("launcherd", absl::GetFlag(FLAGS_launcherd));
  if (!launcherd.ok()) return launcherd.status();
  absl::StatusOr<std::string> brokerd = ExecutableFlag("brokerd", absl::GetFlag(FLAGS_brokerd));
  if (!brokerd.ok()) return brokerd.status();
  absl::StatusOr<std::string> sandboxctl =
      ExecutableFlag("sandboxctl", absl::GetFlag(FLAGS_sandboxctl));
  if (!sandboxctl.ok()) return sandboxctl.status();
  absl::StatusOr<std::string> client = ExecutableFlag("client", absl::GetFlag(FLAGS_client));
  if (!client.ok()) return client.status();
  b.sandboxctl = *sandboxctl;
  b.client = *client;

  // Sockets under /tmp (short paths); the broker's runtime dir beside it (it must not exist: the
  // broker creates it and removes it at exit); the work tree elsewhere, since the launcher
  // refuses binds that overlap its socket dir.
  absl::StatusOr<TempDir> sockets = TempDir::Create("/tmp/ccsegress.");
  if (!sockets.ok()) return sockets.status();
  b.dir = sockets->path();
  const std::string runtime_dir = b.dir + ".run";
  // The broker removes it at an orderly exit; this covers a broker that had to be killed.
  absl::Cleanup remove_runtime_dir = [&] {
    std::error_code ignored;
    std::filesystem::remove_all(runtime_dir, ignored);
  };
  absl::StatusOr<TempDir> work = TempDir::Create("/var/tmp/ccsegress-wd.");
  if (!work.ok()) return work.status();
  b.workdir = work->path();
  chmod(b.workdir.c_str(), 0755);
  b.guest_client = b.workdir + "/egress_bench_client";
  std::error_code copy_error;
  std::filesystem::copy_file(b.client, b.guest_client, copy_error);
  if (copy_error || chmod(b.guest_client.c_str(), 0755) != 0) {
    return absl::InternalError(absl::StrCat("cannot copy ", b.client, " to ", b.guest_client));
  }

  absl::StatusOr<Child> upstream = Child::Spawn({.argv = {b.client, "--mode=upstream"},
                                                 .output = b.dir + "/upstream.out",
                                                 .die_with_parent = true});
  if (!upstream.ok()) return upstream.status();
  b.upstream_pid = upstream->pid();
  uint32_t port = 0;
  for (int i = 0; i < 1000 && port == 0 && !upstream->Exited(); ++i) {
    const std::string out = ReadFile(b.dir + "/upstream.out");
    if (out.rfind("port=", 0) != 0 || out.find('\n') == std::string::npos ||
        !absl::SimpleAtoi(out.substr(5, out.find('\n') - 5), &port)) {
      port = 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (port == 0) return absl::UnavailableError("the upstream did not start");
  b.target = absl::StrCat(kUpstreamName, ":", port);
  const std::string hosts = b.dir + "/hosts";
  std::ofstream(hosts) << "127.0.0.1 " << kUpstreamName << "\n";

  absl::StatusOr<Child> launcher =
      Child::Spawn({.argv = {*launcherd, "--socket=" + b.dir + "/l.sock",
                             absl::StrCat("--allowed-uids=", getuid())},
                    .output = b.dir + "/launcher.log",
                    .die_with_parent = true});
  if (!launcher.ok()) return launcher.status();
  if (absl::Status up = WaitForSocket(b.dir + "/l.sock", *launcher, b.dir + "/launcher.log");
      !up.ok()) {
    return up;
  }
  b.broker_address = "unix:" + b.dir + "/b.sock";
  absl::StatusOr<Child> broker = Child::Spawn(
      {.argv = {*brokerd, "--listen=" + b.broker_address, "--launcher=unix:" + b.dir + "/l.sock",
                "--runtime-dir=" + runtime_dir, "--egress-hosts-file=" + hosts},
       .output = b.dir + "/broker.log",
       .die_with_parent = true});
  if (!broker.ok()) return broker.status();
  if (absl::Status up = WaitForSocket(b.dir + "/b.sock", *broker, b.dir + "/broker.log");
      !up.ok()) {
    return up;
  }
  b.broker_pid = broker->pid();
  b.loop_stat = LoopThreadStat(b.broker_pid);
  b.stub = v1::SandboxBroker::NewStub(
      grpc::CreateChannel(b.broker_address, grpc::InsecureChannelCredentials()));
  if (absl::Status native = CheckNativeDispatch(*b.stub, b.dir + "/broker.log"); !native.ok()) {
    return native;
  }

  b.session_id = absl::StrCat("egress-bench-", getpid());
  if (absl::Status s = Launch(*b.stub, SessionSpec(b, b.session_id)); !s.ok()) return s;
  // The session's proxy sockets (the only session so far): <runtime-dir>/s/<n>/.
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(runtime_dir + "/s", ignored)) {
    b.http_unix = (entry.path() / "http.sock").string();
    b.socks_unix = (entry.path() / "socks.sock").string();
  }
  absl::PrintF(
      "egress_bench: upstream %s = 127.0.0.1:%d (pid %d), broker pid %d, %u CPUs\n"
      "  inside the sandbox: client -> 127.0.0.1:3128 (CONNECT) / :1080 (SOCKS5) -> shim bridge "
      "-> %s -> broker proxy -> upstream\n"
      "  direct (host): the same client on the host -> 127.0.0.1:%d (the "
      "sandbox has no direct route)\n",
      kUpstreamName, port, b.upstream_pid, b.broker_pid, std::thread::hardware_concurrency(),
      b.http_unix, port);
  if (absl::GetFlag(FLAGS_diagnose)) {
    absl::PrintF("  proxy from host: the same client on the host -> %s (no bridge)\n", b.http_unix);
  }
  absl::PrintF("\n");

  absl::Status result = Preflight(b);
  const std::string figures = absl::GetFlag(FLAGS_figures);
  auto want = [&](char figure) { return figures.find(figure) != std::string::npos; };
  const std::vector<ClientPath> paths = ClientPaths(b, absl::GetFlag(FLAGS_diagnose));
  if (result.ok() && want('1') && !g_stop) {
    result = FigureBulk(b, paths,
                        {.mib = absl::GetFlag(FLAGS_bulk_mib),
                         .runs = absl::GetFlag(FLAGS_bulk_runs),
                         .read_kib = absl::GetFlag(FLAGS_bulk_read_kib)});
  }
  if (result.ok() && want('2') && !g_stop) {
    result = FigureRate(b, paths,
                        {.clients = absl::GetFlag(FLAGS_rate_clients),
                         .seconds = absl::GetFlag(FLAGS_rate_seconds),
                         .ttfb_runs = absl::GetFlag(FLAGS_ttfb_runs)});
  }
  if (result.ok() && want('3') && !g_stop) {
    result = FigureBrokerMemory(b, absl::GetFlag(FLAGS_idle_sessions),
                                absl::GetFlag(FLAGS_open_tunnels));
  }
  (void)Destroy(*b.stub, b.session_id);
  if (!result.ok()) {
    return absl::Status(result.code(), absl::StrCat(result.message(), "\nbroker log tail:\n",
                                                    Tail(b.dir + "/broker.log")));
  }
  return g_stop ? absl::CancelledError("interrupted") : absl::OkStatus();
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "egress_bench --launcherd=PATH --brokerd=PATH --sandboxctl=PATH --client=PATH "
      "[--figures=123] [--bulk-mib=2048] [--bulk-runs=3] [--rate-seconds=3] [--ttfb-runs=2000] "
      "[--idle-sessions=200] [--open-tunnels=500] [--diagnose=false]");
  ParseDashedCommandLine(argc, argv);

  rlimit files;  // 500 held tunnels take ~2,000 descriptors across the chain
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  StopOnSignals();

  const absl::Status status = RunBench();
  if (!status.ok()) {
    absl::FPrintF(stderr, "egress_bench: %s\n", status.ToString());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace ccsandbox::bench

int main(int argc, char** argv) { return ccsandbox::bench::Main(argc, argv); }
