// egress_bench: what egress costs a sandboxed command through the real product
// path, next to a direct loopback connection on the host. Prints figures and
// asserts nothing.
//
// The real sandbox_launcherd and sandbox_brokerd run on private sockets; the
// broker resolves upstream.test -> 127.0.0.1 from a hosts file
// (--egress-hosts-file) and one native session (review mode, a read-only work
// tree) allows exactly upstream.test:PORT. The client (egress_bench_client,
// copied into the work tree) runs inside the sandbox through Exec: its
// connections go 127.0.0.1:3128 / :1080 -> the shim's bridge -> the session's
// Unix sockets -> the broker's proxies -> the upstream (egress_bench_client
// --mode=upstream, its own process). The direct side is the same client on the
// host, connecting to the upstream itself.
//
//   1  bulk download: direct vs HTTP CONNECT vs SOCKS5 through the bridge
//      (MB/s, ratio), with each process's CPU seconds
//   2  tunnels opened per second by 16 concurrent clients, and the added time
//      to first byte (connect + handshake + 1 byte echoed; median, p90)
//   3  broker memory (VmRSS): per idle session (200 Launches) and per open
//      tunnel (500 held through the bridge)
// With --diagnose (default) figures 1 and 2 also show the broker's proxy
// reached from the host through the session's Unix socket: the same proxy
// without the bridge.
//
//   egress_bench --launcherd=PATH --brokerd=PATH --sandboxctl=PATH
//                --client=PATH [--figures=123] [--bulk-mib=2048]
//                [--bulk-runs=3] [--rate-seconds=3] [--ttfb-runs=2000]
//                [--idle-sessions=200] [--open-tunnels=500]
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
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
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/dashed_flags.h"
#include "grpcpp/grpcpp.h"
#include "proto/sandbox.grpc.pb.h"
#include "tests/bench/bench_process.h"

ABSL_FLAG(std::string, launcherd, "", "path of sandbox_launcherd");
ABSL_FLAG(std::string, brokerd, "", "path of sandbox_brokerd");
ABSL_FLAG(std::string, sandboxctl, "", "path of sandboxctl");
ABSL_FLAG(std::string, client, "", "path of egress_bench_client");
ABSL_FLAG(std::string, figures, "123", "which figures to measure (digits 1-3)");
ABSL_FLAG(int, bulk_mib, 2048, "1: MiB per bulk transfer");
ABSL_FLAG(int, bulk_runs, 3, "1: transfers per path (alternating; best and median are reported)");
ABSL_FLAG(std::vector<std::string>, bulk_read_kib, std::vector<std::string>({"1024", "64"}),
          "1: client read sizes, KiB (1024: a greedy reader; 64: a typical "
          "client buffer)");
ABSL_FLAG(double, rate_seconds, 3.0, "2: seconds per tunnel-rate measurement");
ABSL_FLAG(int, rate_clients, 16, "2: concurrent clients for the tunnel rate");
ABSL_FLAG(int, ttfb_runs, 2000, "2: sequential connections for the time to first byte");
ABSL_FLAG(int, idle_sessions, 200, "3: sessions for the idle-session memory figure");
ABSL_FLAG(int, open_tunnels, 500,
          "3: tunnels for the per-tunnel memory figure (a session's proxies "
          "take 1024 "
          "connections at most)");
ABSL_FLAG(bool, diagnose, true,
          "1, 2: also measure the broker's proxy from the host through its "
          "Unix socket");

extern char** environ;

namespace ccsandbox::bench {
namespace {

using Fields = std::map<std::string, std::string>;

constexpr char kUpstreamName[] = "upstream.test";

// ---- /proc ----

long StatusKiB(pid_t pid, const std::string& field) {
  std::istringstream status(ReadFile(absl::StrCat("/proc/", pid, "/status")));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return 0;
}

long OpenFds(pid_t pid) {
  long count = 0;
  std::error_code ignored;
  for (auto it = std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/fd"), ignored);
       it != std::filesystem::directory_iterator(); it.increment(ignored)) {
    ++count;
  }
  return count;
}

// CPU seconds (user + system) from a /proc/.../stat file; 0 when it is gone.
double CpuSeconds(const std::string& stat_path) {
  const std::string stat = ReadFile(stat_path);
  const size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close_paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The stat file of the broker's proxy event loop thread ("egress-loop").
std::string LoopThreadStat(pid_t broker) {
  std::error_code ignored;
  for (const auto& entry :
       std::filesystem::directory_iterator(absl::StrCat("/proc/", broker, "/task"), ignored)) {
    std::string name = ReadFile((entry.path() / "comm").string());
    if (name == "egress-loop\n") return (entry.path() / "stat").string();
  }
  return "";
}

// ---- The bench ----

struct Bench {
  std::string dir;           // sockets, logs, spec, hosts file
  std::string client;        // egress_bench_client on the host
  std::string guest_client;  // its copy in the work tree
  std::string workdir;
  std::string sandboxctl;
  std::string broker_address;
  std::string target;  // upstream.test:PORT
  std::string http_unix, socks_unix;
  pid_t upstream_pid = -1;
  pid_t broker_pid = -1;
  std::string loop_stat;
  std::string session_id;
  std::unique_ptr<v1::SandboxBroker::Stub> stub;
  int host_runs = 0;
};

// "key=value key=value ..." -> key -> value.
Fields ParseFields(const std::string& line) {
  Fields fields;
  for (absl::string_view kv : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
    const size_t eq = kv.find('=');
    if (eq != absl::string_view::npos) {
      fields[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
    }
  }
  return fields;
}

// The last "result ..." line of a client's output as key -> value.
absl::StatusOr<Fields> ParseResult(const std::string& output) {
  const size_t at = output.rfind("result ");
  if (at == std::string::npos || (at > 0 && output[at - 1] != '\n')) {
    return absl::InternalError(absl::StrCat("the client printed no result:\n", output));
  }
  return ParseFields(output.substr(at, output.find('\n', at) - at));
}

double Num(const Fields& fields, const std::string& key) {
  double value = 0;
  auto it = fields.find(key);
  if (it == fields.end() || !absl::SimpleAtod(it->second, &value)) return 0;
  return value;
}

// CPU seconds of the upstream and of the broker's proxy loop, around one
// measurement.
struct CpuMark {
  double upstream = 0, proxy = 0;
};

CpuMark Mark(const Bench& b) {
  return {CpuSeconds(absl::StrCat("/proc/", b.upstream_pid, "/stat")), CpuSeconds(b.loop_stat)};
}

struct Measured {
  Fields result;
  double upstream_cpu = 0;
  double proxy_cpu = 0;  // 0 for direct
};

// The client on the host, to completion.
absl::StatusOr<Measured> RunOnHost(Bench& b, std::vector<std::string> args) {
  const std::string output = absl::StrCat(b.dir, "/host-client.out");
  args.insert(args.begin(), b.client);
  args.push_back("--target=" + b.target);  // direct: 127.0.0.1 and its port
  const CpuMark before = Mark(b);
  absl::StatusOr<Child> child = Child::Spawn({.argv = args, .output = output});
  if (!child.ok()) return child.status();
  const int status = child->Wait().value_or(-1);
  const CpuMark after = Mark(b);
  const std::string out = ReadFile(output);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat("host client ended with wait status ", status, ":\n", out));
  }
  absl::StatusOr<Fields> result = ParseResult(out);
  if (!result.ok()) return result.status();
  return Measured{*std::move(result), after.upstream - before.upstream, after.proxy - before.proxy};
}

// The client inside the sandbox (Exec on the bench session); `on_line` sees
// each stdout line as it arrives.
absl::StatusOr<Measured> RunInSandbox(Bench& b, std::vector<std::string> args,
                                      const std::function<void(const std::string&)>& on_line = {}) {
  v1::ExecRequest exec;
  exec.set_session_id(b.session_id);
  exec.add_argv(b.guest_client);
  for (const std::string& a : args) exec.add_argv(a);
  exec.add_argv("--target=" + b.target);
  exec.set_timeout_ms(600'000);
  const CpuMark before = Mark(b);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(660));
  std::unique_ptr<grpc::ClientReader<v1::SandboxEvent>> reader = b.stub->Exec(&context, exec);
  v1::SandboxEvent event;
  std::string out, err, pending;
  int exit_code = -1;
  while (reader->Read(&event)) {
    if (event.has_stdout()) {
      out += event.stdout();
      pending += event.stdout();
      for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
        if (on_line) on_line(pending.substr(0, nl));
        pending.erase(0, nl + 1);
      }
    }
    if (event.has_stderr()) err += event.stderr();
    if (event.has_violation()) {
      absl::StrAppend(&err, "violation ", event.violation().action(), " ",
                      event.violation().target(), " ", event.violation().raw(), "\n");
    }
    if (event.has_exit()) exit_code = event.exit().exit_code();
    if (event.has_killed()) exit_code = 128 + event.killed().signal();
    if (event.has_error()) absl::StrAppend(&err, "error ", event.error().message(), "\n");
  }
  const grpc::Status status = reader->Finish();
  const CpuMark after = Mark(b);
  if (!status.ok()) return absl::InternalError(absl::StrCat("Exec: ", status.error_message()));
  if (exit_code != 0) {
    return absl::InternalError(absl::StrCat("the sandboxed client exited ", exit_code,
                                            "; stdout:\n", out, "stderr:\n", err));
  }
  absl::StatusOr<Fields> result = ParseResult(out);
  if (!result.ok()) return result.status();
  return Measured{*std::move(result), after.upstream - before.upstream, after.proxy - before.proxy};
}

// One path a measurement can take.
struct Path {
  std::string name;
  bool sandbox = false;
  std::vector<std::string> args;  // --via=... and, from the host, the proxy's Unix socket
};

std::vector<Path> Paths(const Bench& b, bool diagnose) {
  std::vector<Path> paths = {{"direct (host)", false, {"--via=direct"}}};
  if (diagnose) {
    paths.push_back(
        {"proxy from host", false, {"--via=connect", "--http-proxy=unix:" + b.http_unix}});
  }
  paths.push_back({"CONNECT, bridge", true, {"--via=connect"}});
  paths.push_back({"SOCKS5, bridge", true, {"--via=socks"}});
  return paths;
}

absl::StatusOr<Measured> Run(Bench& b, const Path& path, std::vector<std::string> args) {
  args.insert(args.begin(), path.args.begin(), path.args.end());
  return path.sandbox ? RunInSandbox(b, args) : RunOnHost(b, args);
}

std::string CpuLine(const Measured& m, double wall, bool percent) {
  auto fmt = [&](double seconds) {
    return percent ? absl::StrFormat("%3.0f%%", 100 * seconds / wall)
                   : absl::StrFormat("%5.2f", seconds);
  };
  std::string line = absl::StrCat("upstream ", fmt(m.upstream_cpu), "  proxy ", fmt(m.proxy_cpu));
  absl::StrAppend(&line, "  bridge ",
                  m.result.count("bridge_cpu_s") ? fmt(Num(m.result, "bridge_cpu_s")) : "    -",
                  "  client ", fmt(Num(m.result, "cpu_s")));
  return line;
}

absl::Status FigureBulk(Bench& b) {
  const std::vector<Path> paths = Paths(b, absl::GetFlag(FLAGS_diagnose));
  const uint64_t bytes = static_cast<uint64_t>(absl::GetFlag(FLAGS_bulk_mib)) << 20;
  const int runs = std::max(1, absl::GetFlag(FLAGS_bulk_runs));
  for (const std::string& kib : absl::GetFlag(FLAGS_bulk_read_kib)) {
    absl::PrintF(
        "1. bulk download, %d MiB, client reads of %s KiB, %d runs each "
        "(MB/s)\n",
        absl::GetFlag(FLAGS_bulk_mib), kib, runs);
    std::vector<std::vector<double>> samples(paths.size());
    for (int run = 0; run < runs && !g_stop; ++run) {
      for (size_t p = 0; p < paths.size(); ++p) {
        absl::StatusOr<Measured> m =
            Run(b, paths[p], {"--mode=bulk", absl::StrCat("--bytes=", bytes), "--read-kib=" + kib});
        if (!m.ok()) return m.status();
        const double mbps = Num(m->result, "mbps");
        samples[p].push_back(mbps);
        absl::PrintF("   %-16s %6.0f MB/s   cpu s: %s  (wall %.2f s)\n", paths[p].name, mbps,
                     CpuLine(*m, Num(m->result, "seconds"), false), Num(m->result, "seconds"));
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
    }
    absl::PrintF("\n");
  }
  return absl::OkStatus();
}

absl::Status FigureRate(Bench& b) {
  const std::vector<Path> paths = Paths(b, absl::GetFlag(FLAGS_diagnose));
  const int clients = absl::GetFlag(FLAGS_rate_clients);
  const double seconds = absl::GetFlag(FLAGS_rate_seconds);
  absl::PrintF(
      "2a. tunnels per second, %d concurrent clients, %.1f s each (connect, "
      "handshake, 1 byte "
      "each way, close); cpu as %% of wall\n",
      clients, seconds);
  double direct = 0;
  for (const Path& path : paths) {
    if (g_stop) break;
    absl::StatusOr<Measured> m = Run(
        b, path,
        {"--mode=rate", absl::StrCat("--clients=", clients), absl::StrCat("--seconds=", seconds)});
    if (!m.ok()) return m.status();
    const double rate = Num(m->result, "per_s");
    if (direct == 0) direct = rate;
    absl::PrintF("   %-16s %7.0f /s", path.name, rate);
    if (path.name == paths[0].name) {
      absl::PrintF("%16s", "");
    } else {
      absl::PrintF("   %5.2fx direct", rate / direct);
    }
    absl::PrintF("   %s", CpuLine(*m, Num(m->result, "seconds"), true));
    if (Num(m->result, "failures") > 0) absl::PrintF("   failures %s", m->result["failures"]);
    absl::PrintF("%s\n", path.sandbox ? "   (target >= 2,000/s)" : "");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let TIME_WAIT settle
  }

  const int runs = absl::GetFlag(FLAGS_ttfb_runs);
  absl::PrintF(
      "\n2b. time to first byte: connect + handshake + 1 byte echoed, %d "
      "sequential runs (us)\n",
      runs);
  double direct_median = 0, direct_p90 = 0;
  for (const Path& path : paths) {
    if (g_stop) break;
    absl::StatusOr<Measured> m = Run(b, path, {"--mode=ttfb", absl::StrCat("--runs=", runs)});
    if (!m.ok()) return m.status();
    const double median = Num(m->result, "median_us"), p90 = Num(m->result, "p90_us");
    if (path.name == paths[0].name) {
      direct_median = median;
      direct_p90 = p90;
    }
    absl::PrintF("   %-16s median %7.1f   p90 %7.1f   p99 %7.1f", path.name, median, p90,
                 Num(m->result, "p99_us"));
    if (path.name != paths[0].name) {
      absl::PrintF("   added %+7.1f (median) %+7.1f (p90)", median - direct_median,
                   p90 - direct_p90);
    }
    if (Num(m->result, "failures") > 0) absl::PrintF("   failures %s", m->result["failures"]);
    absl::PrintF("\n");
  }
  absl::PrintF("\n");
  return absl::OkStatus();
}

v1::SandboxSpec SessionSpec(const Bench& b, const std::string& session_id) {
  v1::SandboxSpec spec;
  spec.set_session_id(session_id);
  spec.set_mode("review");
  v1::SandboxBindMount* bind = spec.add_bind_mounts();
  bind->set_host_path(b.workdir);
  bind->set_guest_path(b.workdir);
  bind->set_read_only(true);
  spec.set_guest_workdir(b.workdir);
  // A name resolving to loopback passes the rebinding guard only as an exact
  // entry.
  spec.add_egress_allowlist(b.target);
  return spec;
}

absl::Status Launch(Bench& b, const v1::SandboxSpec& spec) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::LaunchRequest launch;
  *launch.mutable_spec() = spec;
  launch.set_backend("native");
  v1::SandboxHandle handle;
  const grpc::Status status = b.stub->Launch(&context, launch, &handle);
  if (!status.ok()) return absl::InternalError(absl::StrCat("Launch: ", status.error_message()));
  return absl::OkStatus();
}

void Destroy(Bench& b, const std::string& session_id) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::SessionRequest destroy;
  destroy.set_session_id(session_id);
  v1::SandboxHandle handle;
  (void)b.stub->Destroy(&context, destroy, &handle);
}

absl::Status FigureMemory(Bench& b) {
  absl::PrintF("3. broker memory (VmRSS of sandbox_brokerd, pid %d)\n", b.broker_pid);
  const int n = std::max(1, absl::GetFlag(FLAGS_idle_sessions));
  // A few Launch/Destroy first, so one-time costs (gRPC, allocator arenas) are
  // not charged per session.
  for (int i = 0; i < 5; ++i) {
    const std::string id = absl::StrCat("egress-bench-warm-", i);
    if (absl::Status s = Launch(b, SessionSpec(b, id)); !s.ok()) return s;
    Destroy(b, id);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const long rss0 = StatusKiB(b.broker_pid, "VmRSS");
  const long fds0 = OpenFds(b.broker_pid);
  std::vector<std::string> ids;
  absl::Status launched;
  for (int i = 0; i < n && !g_stop && launched.ok(); ++i) {
    ids.push_back(absl::StrCat("egress-bench-idle-", i));
    launched = Launch(b, SessionSpec(b, ids.back()));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const long rss1 = StatusKiB(b.broker_pid, "VmRSS");
  const long fds1 = OpenFds(b.broker_pid);
  for (const std::string& id : ids) Destroy(b, id);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const long rss2 = StatusKiB(b.broker_pid, "VmRSS");
  if (!launched.ok()) return launched;
  absl::PrintF(
      "   idle sessions %4d: RSS %ld -> %ld KiB: %+.1f KiB per session   "
      "(target <= 1024 KiB)\n"
      "                       descriptors %.1f per session; RSS after "
      "destroying them all: %ld "
      "KiB\n",
      n, rss0, rss1, static_cast<double>(rss1 - rss0) / n, static_cast<double>(fds1 - fds0) / n,
      rss2);

  // Open tunnels, held by one sandboxed client through the bridge.
  const int tunnels = absl::GetFlag(FLAGS_open_tunnels);
  const std::string signals = b.workdir + "/signals";
  std::filesystem::create_directory(signals);
  long broker0 = 0, broker1 = 0, bfds0 = 0, bfds1 = 0, bridge0 = 0, bridge1 = 0, held = 0;
  auto touch = [&](const std::string& name) { std::ofstream(signals + "/" + name) << ""; };
  auto on_line = [&](const std::string& line) {
    if (line.rfind("stage=", 0) != 0) return;
    Fields f = ParseFields(line);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (f["stage"] == "ready") {
      broker0 = StatusKiB(b.broker_pid, "VmRSS");
      bfds0 = OpenFds(b.broker_pid);
      bridge0 = static_cast<long>(Num(f, "bridge_rss_kib"));
      touch("open");
    } else if (f["stage"] == "held") {
      broker1 = StatusKiB(b.broker_pid, "VmRSS");
      bfds1 = OpenFds(b.broker_pid);
      bridge1 = static_cast<long>(Num(f, "bridge_rss_kib"));
      held = static_cast<long>(Num(f, "tunnels"));
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
      "   open tunnels  %4ld (CONNECT through the bridge, 1 byte each way, "
      "then idle):\n"
      "                       broker RSS %ld -> %ld KiB: %+.2f KiB per tunnel  "
      " (target <= 32 KiB)\n"
      "                       broker descriptors %.2f per tunnel; bridge "
      "(shim) RSS %+.2f KiB "
      "per tunnel\n",
      held, broker0, broker1, (broker1 - broker0) / per, (bfds1 - bfds0) / per,
      (bridge1 - bridge0) / per);
  return absl::OkStatus();
}

// The CLI path once, with a spec file, as a check that the whole chain works
// before measuring.
absl::Status Preflight(Bench& b) {
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
      "preflight: sandboxctl run --spec --json: %s CONNECT tunnels through the "
      "bridge, "
      "median %.0f us\n\n",
      (*result)["n"], Num(*result, "median_us"));
  return absl::OkStatus();
}

absl::Status RunBench() {
  Bench b;
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

  // Sockets under /tmp (short paths); the broker's runtime dir beside it (it
  // must not exist: the broker creates it and removes it at exit); the work
  // tree elsewhere, since the launcher refuses binds that overlap its socket
  // dir.
  absl::StatusOr<TempDir> sockets = TempDir::Create("/tmp/ccsegress.");
  if (!sockets.ok()) return sockets.status();
  b.dir = sockets->path();
  const std::string runtime_dir = b.dir + ".run";
  // The broker removes it at an orderly exit; this covers a broker that had to
  // be killed.
  struct RemoveAtExit {
    std::string path;
    ~RemoveAtExit() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } remove_runtime_dir{runtime_dir};
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
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    context.set_wait_for_ready(true);
    v1::ProbeResponse probe;
    const grpc::Status status = b.stub->Probe(&context, v1::ProbeRequest(), &probe);
    if (!status.ok()) {
      return absl::UnavailableError(absl::StrCat("broker Probe: ", status.error_message()));
    }
    if (probe.dispatch_backend() != v1::SANDBOX_BACKEND_NATIVE) {
      return absl::FailedPreconditionError(
          absl::StrCat("the broker would not run natively here: ", probe.status_line()));
    }
  }

  b.session_id = absl::StrCat("egress-bench-", getpid());
  if (absl::Status s = Launch(b, SessionSpec(b, b.session_id)); !s.ok()) return s;
  // The session's proxy sockets (the only session so far):
  // <runtime-dir>/s/<n>/.
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(runtime_dir + "/s", ignored)) {
    b.http_unix = (entry.path() / "http.sock").string();
    b.socks_unix = (entry.path() / "socks.sock").string();
  }
  absl::PrintF(
      "egress_bench: upstream %s = 127.0.0.1:%d (pid %d), broker pid %d, %u "
      "CPUs\n"
      "  inside the sandbox: client -> 127.0.0.1:3128 (CONNECT) / :1080 "
      "(SOCKS5) -> shim bridge "
      "-> %s -> broker proxy -> upstream\n"
      "  direct (host): the same client on the host -> 127.0.0.1:%d (the "
      "sandbox has no direct "
      "route)\n",
      kUpstreamName, port, b.upstream_pid, b.broker_pid, std::thread::hardware_concurrency(),
      b.http_unix, port);
  if (absl::GetFlag(FLAGS_diagnose)) {
    absl::PrintF("  proxy from host: the same client on the host -> %s (no bridge)\n", b.http_unix);
  }
  absl::PrintF("\n");

  absl::Status result = Preflight(b);
  const std::string figures = absl::GetFlag(FLAGS_figures);
  auto want = [&](char figure) { return figures.find(figure) != std::string::npos; };
  if (result.ok() && want('1') && !g_stop) result = FigureBulk(b);
  if (result.ok() && want('2') && !g_stop) result = FigureRate(b);
  if (result.ok() && want('3') && !g_stop) result = FigureMemory(b);
  Destroy(b, b.session_id);
  if (!result.ok()) {
    return absl::Status(result.code(), absl::StrCat(result.message(), "\nbroker log tail:\n",
                                                    Tail(b.dir + "/broker.log")));
  }
  return g_stop ? absl::CancelledError("interrupted") : absl::OkStatus();
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "egress_bench --launcherd=PATH --brokerd=PATH --sandboxctl=PATH "
      "--client=PATH "
      "[--figures=123] [--bulk-mib=2048] [--bulk-runs=3] [--rate-seconds=3] "
      "[--ttfb-runs=2000] "
      "[--idle-sessions=200] [--open-tunnels=500] [--diagnose=false]");
  ParseDashedCommandLine(argc, argv);

  signal(SIGPIPE, SIG_IGN);
  rlimit files;  // 500 held tunnels take ~2,000 descriptors across the chain
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  struct sigaction stop = {};
  stop.sa_handler = OnStopSignal;
  sigaction(SIGINT, &stop, nullptr);
  sigaction(SIGTERM, &stop, nullptr);

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
