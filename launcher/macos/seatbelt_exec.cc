#include "launcher/macos/seatbelt_exec.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "policy/plan/egress_wiring.h"
#include "policy/seatbelt/seatbelt_profile.h"

namespace ccsandbox::launcher::macos {
namespace {

absl::Status CheckEgress(const v1::EgressPlan& egress) {
  if (!egress.http_socket().empty() || !egress.socks_socket().empty() ||
      !egress.push_socket().empty()) {
    return absl::InvalidArgumentError(
        "egress.httpSocket: Unix-socket egress is the Linux launch's; a Seatbelt sandbox reaches "
        "its proxies on loopback ports (egress.httpPort, egress.socksPort)");
  }
  if (egress.http_port() == 0 || egress.socks_port() == 0 || egress.http_port() > 65535 ||
      egress.socks_port() > 65535) {
    return absl::InvalidArgumentError("egress.httpPort: both proxy ports are needed (1-65535)");
  }
  // The URLs must name the ports the profile opens, or the command would be pointed at a port
  // the profile denies (or, worse, the profile would open one the URLs do not use).
  if (!absl::EndsWith(egress.http_proxy_url(), absl::StrCat("@127.0.0.1:", egress.http_port())) ||
      !absl::StartsWith(egress.http_proxy_url(), "http://")) {
    return absl::InvalidArgumentError(
        "egress.httpProxyUrl: expected http://USER:PASSWORD@127.0.0.1:<egress.httpPort>");
  }
  if (!absl::EndsWith(egress.socks_proxy_url(), absl::StrCat("@127.0.0.1:", egress.socks_port())) ||
      !absl::StartsWith(egress.socks_proxy_url(), "socks5h://")) {
    return absl::InvalidArgumentError(
        "egress.socksProxyUrl: expected socks5h://USER:PASSWORD@127.0.0.1:<egress.socksPort>");
  }
  return absl::OkStatus();
}

bool HasNul(const std::string& s) { return s.find('\0') != std::string::npos; }

}  // namespace

absl::StatusOr<SeatbeltExec> RenderSeatbeltExec(const SeatbeltRun& run,
                                                const std::string& sandbox_exec) {
  if (run.argv.empty() || run.argv[0].empty()) {
    return absl::InvalidArgumentError("argv: empty; name the command to run");
  }
  for (size_t i = 0; i < run.argv.size(); ++i) {
    if (HasNul(run.argv[i])) {
      return absl::InvalidArgumentError(absl::StrCat("argv[", i, "]: holds a NUL byte"));
    }
  }
  if (!absl::StartsWith(run.profile_path, "/") || HasNul(run.profile_path)) {
    return absl::InvalidArgumentError("profilePath: must be an absolute path");
  }
  if (!absl::StartsWith(run.workdir, "/") || HasNul(run.workdir)) {
    return absl::InvalidArgumentError("workdir: must be an absolute path");
  }
  std::map<std::string, std::string> env = run.env;
  for (const auto& [name, value] : env) {
    if (name.empty() || absl::StrContains(name, '=') || HasNul(name) || HasNul(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("env: the variable '", absl::CEscape(name), "' cannot be set"));
    }
  }
  if (run.egress.has_value()) {
    if (absl::Status s = CheckEgress(*run.egress); !s.ok()) return s;
    for (auto& [name, value] :
         policy::ProxyEnvironment(run.egress->http_proxy_url(), run.egress->socks_proxy_url())) {
      env[name] = std::move(value);
    }
  }
  SeatbeltExec exec;
  exec.executable = sandbox_exec;
  // "--": a command whose name starts with '-' is never read as one of sandbox-exec's options
  // (-p would replace the profile).
  exec.argv = {"sandbox-exec", "-f", run.profile_path, "--"};
  exec.argv.insert(exec.argv.end(), run.argv.begin(), run.argv.end());
  for (const auto& [name, value] : env) exec.envp.push_back(absl::StrCat(name, "=", value));
  exec.cwd = run.workdir;
  return exec;
}

absl::StatusOr<std::string> RunDispatchProfile(const v1::SandboxSpec& spec,
                                               const std::vector<std::string>& home_dirs,
                                               const std::vector<std::string>& temp_dirs,
                                               const v1::EgressPlan& egress,
                                               const PathResolver& resolver) {
  if (absl::Status s = CheckEgress(egress); !s.ok()) return s;
  const std::vector<policy::seatbelt::ProxyPort> ports = {
      {"HTTP PROXY", static_cast<int>(egress.http_port())},
      {"SOCKS PROXY", static_cast<int>(egress.socks_port())}};
  absl::StatusOr<policy::seatbelt::SeatbeltInputs> inputs =
      policy::seatbelt::DispatchInputs(spec, home_dirs, temp_dirs, ports);
  if (!inputs.ok()) return inputs.status();
  return policy::seatbelt::RenderDispatchProfile(*inputs, resolver);
}

}  // namespace ccsandbox::launcher::macos
