// `sandboxctl plan`: what a spec becomes on this host, without running anything — the bwrap
// argv, both deny sets, the create guard, the egress allowlist as parsed (the broker's
// RenderPlan) — so a person can review a policy before trusting it. --platform=macos prints the
// Seatbelt profile the spec becomes instead (generated and golden-tested, not yet run on a Mac).
//
//   sandboxctl plan --spec=FILE.json [--platform=linux|macos] [--backend=NAME] [--json]
//                   [-- CMD ...]
//
// Exit codes: 0 when the broker rendered the plan; 125 when it refused the spec (with Launch's
// message), when sandboxctl or the broker failed, and for a usage error.
#ifndef CCSANDBOX_BROKER_CLI_PLAN_H_
#define CCSANDBOX_BROKER_CLI_PLAN_H_

#include <string>
#include <vector>

#include "broker/cli_launch.h"
#include "proto/sandbox.grpc.pb.h"

namespace ccsandbox::broker {

// The human rendering: one heading per section ("backend:", "bwrap argv:", "deny read (hidden):",
// ...), its items indented below, "(none)" for an empty one.
std::string FormatRenderPlan(const v1::RenderPlanResponse& plan);

// One line of proto3 JSON (fields at their defaults included).
std::string RenderPlanJson(const v1::RenderPlanResponse& plan);

// Asks the broker for the plan of `flags`' spec on `platform`, the run's command `argv` (empty:
// a placeholder); prints it on stdout and returns the exit code.
int RunPlan(v1::SandboxBroker::Stub& stub, const LaunchFlags& flags, const std::string& platform,
            const std::vector<std::string>& argv, bool json);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_PLAN_H_
