// egress_bench's working parts: the running bench (daemons, upstream, the one native session
// and its proxies' sockets), egress_bench_client run on the host or inside the sandbox with the
// CPU seconds the upstream and the broker's proxy loop spent meanwhile, the client's
// "result key=value ..." line, and the paths a measurement can take. Bench-only; asserts
// nothing.
//
//   for (const ClientPath& path : ClientPaths(bench, /*diagnose=*/true)) {
//     absl::StatusOr<Measured> m = RunClient(bench, path, {"--mode=ttfb", "--runs=100"});
//     if (m.ok()) absl::PrintF("%s %.1f us\n", path.name, ResultNumber(m->result, "median_us"));
//   }
#ifndef CCSANDBOX_TESTS_BENCH_EGRESS_BENCH_SESSION_H_
#define CCSANDBOX_TESTS_BENCH_EGRESS_BENCH_SESSION_H_

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/sandbox.grpc.pb.h"

namespace ccsandbox::bench {

// The name the broker's hosts file answers with 127.0.0.1 (the upstream).
inline constexpr char kUpstreamName[] = "upstream.test";

struct EgressBench {
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
  std::string loop_stat;  // the broker's egress-loop thread (proc_cpu.h)
  std::string session_id;
  std::unique_ptr<v1::SandboxBroker::Stub> stub;
};

// A client's result: key -> value.
using Fields = std::map<std::string, std::string>;

// "key=value key=value ..." -> key -> value.
Fields ParseFields(const std::string& line);
// The last "result ..." line of a client's output.
absl::StatusOr<Fields> ParseResult(const std::string& output);
// A number of the result; 0 when it is missing or not a number.
double ResultNumber(const Fields& fields, const std::string& key);

struct Measured {
  Fields result;
  double upstream_cpu = 0;
  double proxy_cpu = 0;  // 0 for direct
};

// The client on the host, to completion (`args` plus --target).
absl::StatusOr<Measured> RunOnHost(EgressBench& b, std::vector<std::string> args);

// The client inside the sandbox (Exec on the bench session); `on_line` sees each stdout line
// as it arrives.
absl::StatusOr<Measured> RunInSandbox(EgressBench& b, std::vector<std::string> args,
                                      const std::function<void(const std::string&)>& on_line = {});

// One path a measurement can take.
struct ClientPath {
  std::string name;
  bool sandbox = false;
  std::vector<std::string> args;  // --via=... and, from the host, the proxy's Unix socket
};

// direct (host), [proxy from host,] CONNECT through the bridge, SOCKS5 through the bridge.
std::vector<ClientPath> ClientPaths(const EgressBench& b, bool diagnose);

absl::StatusOr<Measured> RunClient(EgressBench& b, const ClientPath& path,
                                   std::vector<std::string> args);

// "upstream X  proxy Y  bridge Z  client W": CPU seconds, or percent of `wall`.
std::string CpuLine(const Measured& m, double wall, bool percent);

// A review-mode session over the read-only work tree that allows exactly the upstream.
v1::SandboxSpec SessionSpec(const EgressBench& b, const std::string& session_id);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_EGRESS_BENCH_SESSION_H_
