#include "tests/bench/egress_bench_session.h"

#include <sys/wait.h>

#include <chrono>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "grpcpp/grpcpp.h"
#include "tests/bench/bench_process.h"
#include "tests/bench/proc_cpu.h"

namespace ccsandbox::bench {
namespace {

// CPU seconds of the upstream and of the broker's proxy loop, around one measurement.
struct CpuMark {
  double upstream = 0, proxy = 0;
};

CpuMark Mark(const EgressBench& b) {
  return {CpuSeconds(absl::StrCat("/proc/", b.upstream_pid, "/stat")), CpuSeconds(b.loop_stat)};
}

}  // namespace

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

absl::StatusOr<Fields> ParseResult(const std::string& output) {
  const size_t at = output.rfind("result ");
  if (at == std::string::npos || (at > 0 && output[at - 1] != '\n')) {
    return absl::InternalError(absl::StrCat("the client printed no result:\n", output));
  }
  return ParseFields(output.substr(at, output.find('\n', at) - at));
}

double ResultNumber(const Fields& fields, const std::string& key) {
  double value = 0;
  auto it = fields.find(key);
  if (it == fields.end() || !absl::SimpleAtod(it->second, &value)) return 0;
  return value;
}

absl::StatusOr<Measured> RunOnHost(EgressBench& b, std::vector<std::string> args) {
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

absl::StatusOr<Measured> RunInSandbox(EgressBench& b, std::vector<std::string> args,
                                      const std::function<void(const std::string&)>& on_line) {
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

std::vector<ClientPath> ClientPaths(const EgressBench& b, bool diagnose) {
  std::vector<ClientPath> paths = {{"direct (host)", false, {"--via=direct"}}};
  if (diagnose) {
    paths.push_back(
        {"proxy from host", false, {"--via=connect", "--http-proxy=unix:" + b.http_unix}});
  }
  paths.push_back({"CONNECT, bridge", true, {"--via=connect"}});
  paths.push_back({"SOCKS5, bridge", true, {"--via=socks"}});
  return paths;
}

absl::StatusOr<Measured> RunClient(EgressBench& b, const ClientPath& path,
                                   std::vector<std::string> args) {
  args.insert(args.begin(), path.args.begin(), path.args.end());
  return path.sandbox ? RunInSandbox(b, args) : RunOnHost(b, args);
}

std::string CpuLine(const Measured& m, double wall, bool percent) {
  auto fmt = [&](double seconds) {
    return percent ? absl::StrFormat("%3.0f%%", 100 * seconds / wall)
                   : absl::StrFormat("%5.2f", seconds);
  };
  std::string line = absl::StrCat("upstream ", fmt(m.upstream_cpu), "  proxy ", fmt(m.proxy_cpu));
  absl::StrAppend(
      &line, "  bridge ",
      m.result.count("bridge_cpu_s") ? fmt(ResultNumber(m.result, "bridge_cpu_s")) : "    -",
      "  client ", fmt(ResultNumber(m.result, "cpu_s")));
  return line;
}

v1::SandboxSpec SessionSpec(const EgressBench& b, const std::string& session_id) {
  v1::SandboxSpec spec;
  spec.set_session_id(session_id);
  spec.set_mode("review");
  v1::SandboxBindMount* bind = spec.add_bind_mounts();
  bind->set_host_path(b.workdir);
  bind->set_guest_path(b.workdir);
  bind->set_read_only(true);
  spec.set_guest_workdir(b.workdir);
  // A name resolving to loopback passes the rebinding guard only as an exact entry.
  spec.add_egress_allowlist(b.target);
  return spec;
}

}  // namespace ccsandbox::bench
