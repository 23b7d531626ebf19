// libFuzzer target: the launcher's side of a LaunchPlan, which comes from the unprivileged broker
// (proto/launcher.proto, here as proto3 JSON): ValidatePlan, then — for a plan it accepts —
// the shim's arguments and the bwrap argv the launcher renders. Input: byte 0 picks a run or a
// warm sandbox's start and a root caller or not, the rest is the plan's JSON. Invariants: never
// crash; a refusal names a field, with a bounded message; an accepted plan
// renders, and the argv keeps every rule of tests/fuzz/launch_check.h.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "google/protobuf/util/json_util.h"
#include "policy/plan/plan_validation.h"
#include "proto/launcher.pb.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/launch_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool warm = data[0] & 1;
  const bool inside_root = data[0] & 2;
  const std::string json(reinterpret_cast<const char*>(data) + 1, size - 1);
  ccsandbox::v1::LaunchPlan plan;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  if (!google::protobuf::util::JsonStringToMessage(json, &plan, options).ok()) return 0;

  ccsandbox::policy::PlanLimits limits;
  limits.forbidden_dirs = {"/run/ccsandbox-launcher"};
  limits.sandbox_start = warm;
  const absl::Status valid = ccsandbox::policy::ValidatePlan(plan, limits);
  if (!valid.ok()) {
    // "field: ..." or "field[i].sub: ...", in the plan's JSON spelling; deny paths are host
    // file names the broker found (FAILED_PRECONDITION: "rename it, or leave its tree unbound").
    const absl::string_view message = valid.message();
    FUZZ_CHECK(valid.code() == absl::StatusCode::kInvalidArgument ||
               (valid.code() == absl::StatusCode::kFailedPrecondition &&
                absl::StartsWith(message, "deny")));
    const size_t colon = message.find(": ");
    FUZZ_CHECK(colon != absl::string_view::npos && colon > 0);
    FUZZ_CHECK(absl::ascii_islower(message[0]));
    FUZZ_CHECK(message.size() <= 2048);
    return 0;
  }
  if (plan.backend() != ccsandbox::v1::SANDBOX_BACKEND_NATIVE) return 0;
  ccsandbox::fuzz::CheckLaunch(plan, warm, inside_root);
  return 0;
}
