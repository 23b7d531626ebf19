// libFuzzer target: a SandboxSpec as a client writes it (proto3 JSON, sandboxctl --spec=FILE or
// the Launch RPC) through everything that is pure between Launch and bwrap: ParseSpecJson,
// ValidateSpec and the broker's other pure checks, the filename policy and create guard plan,
// an ExecRequest, BuildLaunchPlan and what PlanRun adds, CheckPlanLimits, then the launcher's
// ValidatePlan for the run, the warm sandbox's start and a run in it, and — native — the shim's
// arguments and the bwrap argv (tests/fuzz/launch_check.h). Input: the spec's JSON, then
// optionally a NUL byte and the ExecRequest's JSON (default: sh -c true).
// Invariants: never crash; what does not parse is refused naming the source, and what parses
// prints back as JSON that parses to the same spec; a refusal is INVALID_ARGUMENT whose message
// starts with a field of the spec (or argv/guestWorkdir/env of the request) and is bounded; a
// spec the broker accepts gives plans the launcher accepts (or the broker refuses them first,
// with the launcher's words), and those render into an argv that keeps launch_check.h's rules.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/paths.h"
#include "broker/cli_spec.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "policy/egress/allowlist.h"
#include "policy/plan/create_guard_rules.h"
#include "policy/plan/deny_sets.h"
#include "policy/plan/filename_patterns.h"
#include "policy/plan/filename_policy.h"
#include "policy/plan/input_limits.h"
#include "policy/plan/launch_plan.h"
#include "policy/plan/plan_validation.h"
#include "policy/plan/spec_validation.h"
#include "policy/plan/trusted_names.h"
#include "policy/plan/workdir_visible.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/launch_check.h"

namespace {

using namespace ccsandbox;  // NOLINT: a fuzz target, named as the broker names things

// A refusal the client reads: INVALID_ARGUMENT, "field...: why", bounded.
void CheckRefusal(const absl::Status& status) {
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  const absl::string_view message = status.message();
  // env['NAME']: the variable's name, quoted and cut by QuoteInput (any byte but controls,
  // which are escaped; a ':' of the name included), then "]: ".
  if (absl::StartsWith(message, "env['")) {
    FUZZ_CHECK(absl::StrContains(message, "']: "));
    for (char c : message) FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
    FUZZ_CHECK(message.size() <= 2048);
    return;
  }
  const size_t colon = message.find(':');
  FUZZ_CHECK(colon != absl::string_view::npos && colon > 0);
  const absl::string_view field = message.substr(0, colon);
  for (char c : field) {
    FUZZ_CHECK(absl::ascii_isalnum(c) || c == '[' || c == ']' || c == '.' || c == '_');
  }
  FUZZ_CHECK(absl::ascii_islower(message[0]));
  FUZZ_CHECK(message.size() <= 2048);
}

// The broker's checks at Launch that need no file system (broker_service.cc CheckLaunchSpec,
// spec_paths.cc CheckSpecPaths without the realpath part).
absl::Status CheckLaunchSpec(const v1::SandboxSpec& spec, v1::SandboxBackend backend) {
  if (absl::Status s = policy::ValidateSpec(spec, backend); !s.ok()) return s;
  if (spec.has_resources() && backend != v1::SANDBOX_BACKEND_NATIVE) {
    return absl::InvalidArgumentError("resources: only the native backend's sandboxes");
  }
  for (const v1::SandboxBindMount& bind : spec.bind_mounts()) {
    // spec_paths.cc refuses these (and the control plane's directories) on what they resolve to.
    for (const char* system : {"/proc", "/dev", "/sys"}) {
      if (IsUnderOrEqual(bind.host_path(), system)) {
        return absl::InvalidArgumentError("bindMounts: a system directory");
      }
    }
  }
  std::vector<std::string> rules(spec.deny_write_names().begin(), spec.deny_write_names().end());
  if (absl::StatusOr<policy::TrustedNameRules> valid = policy::TrustedNameRules::Create(rules);
      !valid.ok()) {
    return valid.status();
  }
  for (int i = 0; i < spec.connectable_sockets_size(); ++i) {
    if (absl::Status s = CheckNormalizedAbsolute(absl::StrCat("connectableSockets[", i, "]"),
                                                 spec.connectable_sockets(i));
        !s.ok()) {
      return s;
    }
  }
  if (backend == v1::SANDBOX_BACKEND_NATIVE && spec.has_guest_workdir()) {
    std::vector<v1::PlanMount> mounts = policy::PlanMounts(spec, policy::Mode::kChat);
    if (absl::Status s = policy::CheckWorkdirVisible("guestWorkdir", spec.guest_workdir(), mounts);
        !s.ok()) {
      return s;
    }
  }
  if (backend == v1::SANDBOX_BACKEND_NATIVE) {
    // The deny scan's checks before it walks anything (deny_scan.cc ScanForDenyPaths).
    const std::vector<std::string> patterns = policy::EffectiveFilenameDenyPatterns(spec);
    if (!patterns.empty()) {
      if (absl::StatusOr<policy::FilenamePatterns> valid =
              policy::FilenamePatterns::Create(patterns);
          !valid.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("writeDenyPatterns: ", valid.status().message()));
      }
    }
  }
  return policy::ValidateEgressAllowlist(spec.egress_allowlist());
}

void Session(const v1::SandboxSpec& spec, v1::SandboxBackend backend, const v1::ExecRequest& exec) {
  if (absl::Status s = CheckLaunchSpec(spec, backend); !s.ok()) {
    CheckRefusal(s);
    return;
  }
  absl::StatusOr<policy::FilenamePolicyDecision> filenames =
      policy::DecideFilenamePolicy(spec, backend, /*create_time_enforcement=*/true);
  FUZZ_CHECK(filenames.ok());
  std::optional<v1::CreateGuardPlan> guard;
  // As the broker does, without home directories or git-config findings (no file system here).
  if (backend == v1::SANDBOX_BACKEND_NATIVE) guard = policy::GuardPlanFor(spec, *filenames, {}, {});

  if (absl::Status s = policy::CheckExecLimits(exec); !s.ok()) {
    CheckRefusal(s);
    return;
  }
  policy::PlanInputs inputs;
  inputs.spec = &spec;
  inputs.backend = backend;
  inputs.exec = &exec;
  inputs.run_id = absl::StrCat(spec.session_id(), "-1-00000000deadbeef");
  inputs.base_env = policy::DefaultEnvironment(backend, {{"TERM", "xterm"}, {"LC_ALL", "C"}});
  if (backend == v1::SANDBOX_BACKEND_NATIVE) {
    // What a deny scan finds: secrets and git hooks in each bind, and the protected paths.
    for (const v1::SandboxBindMount& bind : spec.bind_mounts()) {
      inputs.deny.read.push_back(bind.host_path() + "/.env");
      inputs.deny.read.push_back(bind.host_path() + "/.ssh");
      inputs.deny.write.push_back(bind.host_path() + "/.git/hooks");
    }
    for (const std::string& path : spec.protected_paths()) inputs.deny.write.push_back(path);
  }
  absl::StatusOr<v1::LaunchPlan> plan = policy::BuildLaunchPlan(inputs);
  if (!plan.ok()) {
    CheckRefusal(plan.status());
    return;
  }
  // What PlanRun adds.
  if (guard.has_value()) *plan->mutable_create_guard() = *guard;
  if (spec.has_resources()) *plan->mutable_resources() = spec.resources();
  if (backend == v1::SANDBOX_BACKEND_NATIVE) {
    v1::EgressPlan* egress = plan->mutable_egress();
    egress->set_http_socket("/run/ccsandbox-broker/s/http.sock");
    egress->set_socks_socket("/run/ccsandbox-broker/s/socks.sock");
    if (spec.has_push()) {
      egress->set_push_socket("/run/ccsandbox-broker/s/push.sock");
      *egress->mutable_push_repositories() = spec.push().repositories();
    }
  }
  if (absl::Status s = policy::CheckPlanLimits(*plan); !s.ok()) {
    // Deny paths are host file names (FAILED_PRECONDITION); nothing else may fail here that
    // the spec's own checks let through.
    FUZZ_CHECK(s.code() == absl::StatusCode::kFailedPrecondition &&
               absl::StartsWith(s.message(), "deny"));
    return;
  }

  // The launcher accepts what the broker built: the run, the warm sandbox, a run in it.
  policy::PlanLimits limits;
  const absl::Status run_valid = policy::ValidatePlan(*plan, limits);
  if (!run_valid.ok()) {
    std::fprintf(stderr, "launcher refused the broker's plan: %s\n",
                 std::string(run_valid.message()).c_str());
  }
  FUZZ_CHECK(run_valid.ok());
  if (backend != v1::SANDBOX_BACKEND_NATIVE) return;
  v1::LaunchPlan start = *plan;
  start.clear_argv();
  limits.sandbox_start = true;
  FUZZ_CHECK(policy::ValidatePlan(start, limits).ok());
  v1::LaunchPlan in_sandbox = *plan;
  in_sandbox.clear_mounts();
  in_sandbox.clear_deny_read_paths();
  in_sandbox.clear_deny_write_paths();
  in_sandbox.clear_egress();
  in_sandbox.clear_create_guard();
  in_sandbox.clear_forbidden_dirs();
  in_sandbox.clear_resources();
  in_sandbox.set_sandbox_id(absl::StrCat(spec.session_id(), "-0-sandbox"));
  policy::PlanLimits warm_limits;
  warm_limits.sandbox_mounts = &start.mounts();
  FUZZ_CHECK(policy::ValidatePlan(in_sandbox, warm_limits).ok());

  fuzz::CheckLaunch(*plan, /*warm=*/false, /*inside_root=*/false);
  fuzz::CheckLaunch(start, /*warm=*/true, /*inside_root=*/true);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string spec_json = input.substr(0, nul);

  absl::StatusOr<v1::SandboxSpec> spec = broker::ParseSpecJson("spec.json", spec_json);
  if (!spec.ok()) {
    FUZZ_CHECK(spec.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(absl::StartsWith(spec.status().message(), "spec.json: not a valid SandboxSpec"));
    return 0;
  }
  std::string printed;
  FUZZ_CHECK(google::protobuf::util::MessageToJsonString(*spec, &printed).ok());
  absl::StatusOr<v1::SandboxSpec> reread = broker::ParseSpecJson("printed", printed);
  FUZZ_CHECK(reread.ok() && google::protobuf::util::MessageDifferencer::Equals(*reread, *spec));

  v1::ExecRequest exec;
  exec.set_session_id(spec->session_id());
  bool exec_given = false;
  if (nul != std::string::npos) {
    google::protobuf::util::JsonParseOptions options;
    exec_given =
        google::protobuf::util::JsonStringToMessage(input.substr(nul + 1), &exec, options).ok();
  }
  if (!exec_given) {
    exec.add_argv("sh");
    exec.add_argv("-c");
    exec.add_argv("true");
  }
  Session(*spec, v1::SANDBOX_BACKEND_NATIVE, exec);
  Session(*spec, v1::SANDBOX_BACKEND_NONE, exec);
  return 0;
}
