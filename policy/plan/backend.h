// Backend names and the Launch-time backend choice (spec: "Backends at a glance").
#ifndef CCSANDBOX_POLICY_PLAN_BACKEND_H_
#define CCSANDBOX_POLICY_PLAN_BACKEND_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

// SandboxBackend.fromName for stored values: null or unknown -> none, "docker" -> native.
v1::SandboxBackend BackendFromName(std::optional<absl::string_view> name);

// "none", "native", "microvm" (and "unspecified").
absl::string_view BackendName(v1::SandboxBackend backend);

// What the host offers, fixed at broker boot.
struct HostSandbox {
  bool sandbox_enabled = true;  // false with --sandbox=off
  v1::ProbeResult probe;
  // The microVM runtime (hypervisor, guest kernel and image, and a boot that really worked):
  // available, or the note naming the part that is missing.
  v1::ProbeResult microvm;
};

struct BackendChoice {
  v1::SandboxBackend requested = v1::SANDBOX_BACKEND_UNSPECIFIED;
  v1::SandboxBackend actual = v1::SANDBOX_BACKEND_NONE;
  std::string note;  // why `actual` is what it is, for the handle and the log
};

// Resolves a Launch request's backend name. An empty name takes the host's dispatch
// default (native when the probe found one and the sandbox is on, else none). An explicit
// request never silently downgrades: native/docker/microvm that the host cannot honour is
// FAILED_PRECONDITION, and an unknown explicit name is INVALID_ARGUMENT rather than the
// stored-value fallback to none. microvm the host can boot comes back as microvm: the caller
// must run it in a VM or refuse.
absl::StatusOr<BackendChoice> SelectBackend(absl::string_view requested_name,
                                            const HostSandbox& host);

// Resolves a terminal's backend (spec: "Server-hosted terminal"). An empty request takes
// `default_name` (the broker's configured terminal default; empty = "none", the spec's
// default: the host shell, reported as none). An explicit request never downgrades: native
// or microvm that the host cannot honour is FAILED_PRECONDITION. Only an unspecified
// default of microvm degrades, to native, saying so in the note; a default that can be
// honoured by neither is FAILED_PRECONDITION too (never the host shell in its place).
absl::StatusOr<BackendChoice> SelectTerminalBackend(absl::string_view requested_name,
                                                    absl::string_view default_name,
                                                    const HostSandbox& host);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_BACKEND_H_
