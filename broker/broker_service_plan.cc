// BrokerService's RenderPlan (sandboxctl plan): Launch's own checks and deny scan for a request,
// and the LaunchPlan of one run rendered as the bwrap argv, with nothing started: no session, no
// proxies, no sandbox. A person reviews a policy here before trusting it with a run. On
// --platform=macos, the Seatbelt profile the spec becomes, rendered on this host.
#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/real_host_view.h"
#include "broker/broker_service.h"
#include "policy/egress/allowlist.h"
#include "policy/plan/bwrap_argv.h"
#include "policy/seatbelt/macos_spellings.h"
#include "policy/seatbelt/seatbelt_profile.h"
#include "proto/grpc_status.h"

namespace ccsandbox::broker {
namespace {

constexpr char kCommandPlaceholder[] = "<COMMAND>";

// The proxies' sockets exist only once a Launch starts them.
v1::EgressPlan PlaceholderEgress(const v1::SandboxSpec& spec) {
  v1::EgressPlan egress;
  egress.set_http_socket("<HTTP PROXY SOCKET>");
  egress.set_socks_socket("<SOCKS PROXY SOCKET>");
  if (spec.has_push()) egress.set_push_socket("<PUSH GATEWAY SOCKET>");
  return egress;
}

// The launcher's bwrap and system base as it reports them; the shim's arguments stand in.
policy::BwrapConfig LauncherBwrapConfig(const v1::LauncherProbeResponse& launcher) {
  policy::BwrapConfig config;
  config.bwrap_path = launcher.bwrap_path().empty() ? "bwrap" : launcher.bwrap_path();
  config.system_ro_dirs.assign(launcher.system_ro_dirs().begin(), launcher.system_ro_dirs().end());
  if (config.system_ro_dirs.empty()) config.system_ro_dirs = policy::DefaultSystemRoDirs();
  config.shim_path = "<SANDBOX SHIM>";
  config.shim_args = {"<SHIM ARGUMENTS: EGRESS BRIDGES, CREATE GUARD>", "--"};
  return config;
}

// The macOS plan of a checked spec: the Seatbelt profile from the same renderer a Mac's launcher
// is to use, with macOS's spellings of /tmp, /var and /etc standing in for a Mac's resolver.
absl::Status RenderMacosPlan(const v1::SandboxSpec& spec, const policy::BackendChoice& choice,
                             const std::vector<std::string>& home_dirs,
                             v1::RenderPlanResponse* response) {
  if (choice.requested == v1::SANDBOX_BACKEND_MICROVM) {
    return absl::InvalidArgumentError(
        "platform: macos renders the native (Seatbelt) or none backend, not microvm");
  }
  const v1::SandboxBackend backend = choice.requested == v1::SANDBOX_BACKEND_NONE
                                         ? v1::SANDBOX_BACKEND_NONE
                                         : v1::SANDBOX_BACKEND_NATIVE;
  response->set_platform("macos");
  response->set_requested_backend(choice.requested);
  response->set_backend(backend);
  if (backend == v1::SANDBOX_BACKEND_NONE) {
    response->set_backend_note("requested");
    response->add_notes("the none backend runs the command on the host, unconfined: no profile");
    return absl::OkStatus();
  }
  response->set_backend_note("sandbox-exec (Seatbelt) — namespace isolation, no kernel boundary");
  const std::vector<std::string> patterns = policy::EffectiveFilenameDenyPatterns(spec);
  response->set_filename_policy(
      patterns.empty() ? "none: writeDenyPatterns is [] (the caller accepted the weaker policy)"
                       : "enforced natively by the profile (file-write* denies at any depth)");
  const bool network = !spec.has_network_enabled() || spec.network_enabled();
  absl::StatusOr<policy::EgressAllowlist> allowlist =
      policy::EgressAllowlist::Resolve(network, spec.egress_allowlist());
  if (!allowlist.ok()) return allowlist.status();
  response->set_network_enabled(network);
  for (const std::string& entry : allowlist->AllowEntries()) {
    response->add_egress_allow_entries(entry);
  }
  std::vector<policy::seatbelt::ProxyPort> ports = {{"HTTP PROXY", 0}, {"SOCKS PROXY", 0}};
  if (spec.has_push()) ports.push_back({"PUSH GATEWAY", 0});
  absl::StatusOr<policy::seatbelt::SeatbeltInputs> inputs =
      policy::seatbelt::DispatchInputs(spec, home_dirs, {"<RUN TMPDIR>"}, ports);
  if (!inputs.ok()) return inputs.status();
  absl::StatusOr<std::string> profile =
      policy::seatbelt::RenderDispatchProfile(*inputs, policy::seatbelt::MacosSpellings());
  if (!profile.ok()) return profile.status();
  response->set_seatbelt_profile(*std::move(profile));
  response->add_notes(
      "seatbeltProfile: generated and golden-tested on Linux, NOT yet run on a Mac; the macOS "
      "launch (sandbox-exec -f PROFILE -- CMD) and its log-stream violation monitor are built "
      "and tested on Linux with stand-ins, not yet wired into the daemons (docs/macos.md)");
  response->add_notes(
      "paths are spelled as macOS resolves them by name only (/tmp, /var, /etc -> /private/...); "
      "on a Mac the launcher resolves every symlink on the host");
  response->add_notes(
      "home directories are this host's; on a Mac they are the broker user's (/Users/NAME)");
  response->add_notes(
      "<ANGLE BRACKETS>: the proxies' loopback ports and the run's temp directory exist only "
      "once a Launch starts them; nothing was started for this plan");
  if (!network) {
    response->add_notes("networkEnabled is false: the proxies refuse every connection");
  }
  return absl::OkStatus();
}

}  // namespace

grpc::Status BrokerService::RenderPlan(grpc::ServerContext*, const v1::RenderPlanRequest* request,
                                       v1::RenderPlanResponse* response) {
  const std::string& platform = request->platform();
  if (!platform.empty() && platform != "linux" && platform != "macos") {
    return ToGrpc(absl::InvalidArgumentError("platform: expected linux or macos"));
  }
  absl::StatusOr<CheckedLaunch> checked = CheckLaunch(request->launch());
  if (!checked.ok()) return ToGrpc(checked.status());
  if (platform == "macos") {
    return ToGrpc(RenderMacosPlan(checked->spec, checked->choice, home_dirs_, response));
  }
  const v1::SandboxSpec& spec = checked->spec;
  const v1::SandboxBackend backend = checked->choice.actual;
  absl::StatusOr<SessionPolicy> policy = DecideSessionPolicy(spec, backend);
  if (!policy.ok()) return ToGrpc(policy.status());

  response->set_platform("linux");
  response->set_requested_backend(checked->choice.requested);
  response->set_backend(backend);
  response->set_backend_note(checked->choice.note);
  response->set_filename_policy(policy->filenames.note);
  const policy::DenyPaths& deny = policy->deny;
  response->mutable_deny_read_paths()->Add(deny.read.begin(), deny.read.end());
  response->mutable_deny_write_paths()->Add(deny.write.begin(), deny.write.end());
  response->mutable_creation_denied_paths()->Add(deny.creation_denied.begin(),
                                                 deny.creation_denied.end());
  if (policy->guard_plan.has_value()) {
    const v1::CreateGuardPlan& guard = *policy->guard_plan;
    response->set_create_guard(true);
    *response->mutable_create_guard_patterns() = guard.deny_patterns();
    *response->mutable_create_guard_trusted_names() = guard.trusted_names();
    *response->mutable_create_guard_protected_paths() = guard.protected_paths();
  }
  if (backend != v1::SANDBOX_BACKEND_NATIVE) {
    response->add_notes(
        "the none backend runs the command on the host, unconfined: no bwrap, no deny sets, no "
        "egress proxies");
    return grpc::Status::OK;
  }

  const bool network = !spec.has_network_enabled() || spec.network_enabled();
  absl::StatusOr<policy::EgressAllowlist> allowlist =
      policy::EgressAllowlist::Resolve(network, spec.egress_allowlist());
  if (!allowlist.ok()) return ToGrpc(allowlist.status());
  response->set_network_enabled(network);
  for (const std::string& entry : allowlist->AllowEntries()) {
    response->add_egress_allow_entries(entry);
  }

  v1::ExecRequest exec;
  exec.set_session_id(spec.session_id());
  if (request->argv().empty()) {
    exec.add_argv(kCommandPlaceholder);
  } else {
    *exec.mutable_argv() = request->argv();
  }
  SessionTable::RunStart start{
      .spec = spec, .backend = backend, .deny = policy->deny, .create_guard = policy->guard_plan};
  absl::StatusOr<v1::LaunchPlan> plan = ComposeRunPlan(
      exec, absl::StrCat(spec.session_id(), "-plan"), start, PlaceholderEgress(spec));
  if (!plan.ok()) return ToGrpc(plan.status());
  absl::StatusOr<v1::LauncherProbeResponse> launcher =
      ProbeLauncher(*launcher_.stub, std::chrono::milliseconds(1000));
  if (!launcher.ok()) return ToGrpc(launcher.status());
  absl::StatusOr<std::vector<std::string>> argv =
      policy::RenderBwrapArgv(*plan, LauncherBwrapConfig(*launcher), RealHostView());
  if (!argv.ok()) return ToGrpc(argv.status());
  response->mutable_bwrap_argv()->Add(argv->begin(), argv->end());

  response->add_notes(
      "bwrapArgv: what the launcher would render from this plan on this host now; it checks the "
      "plan again and binds what it opened (staged copies), not these paths by name");
  response->add_notes(
      "<ANGLE BRACKETS>: the egress proxies' sockets and the shim's arguments exist only once a "
      "Launch starts them; nothing was started for this plan");
  response->add_notes(
      "the launcher adds its seccomp filter (--seccomp FD) and, for a root caller, uid 0 inside "
      "the user namespace; a session's runs enter its one warm sandbox, started with these "
      "mounts and the shim as its init");
  if (!network) {
    response->add_notes("networkEnabled is false: the proxies refuse every connection");
  }
  if (policy->filenames.weakened) {
    response->add_notes(absl::StrCat("filename-pattern denies ", policy->filenames.note));
  }
  return grpc::Status::OK;
}

}  // namespace ccsandbox::broker
