// The boot probe's decision table (spec: "Probe results") and the one boot log line.
#ifndef CCSANDBOX_POLICY_PLAN_PROBE_H_
#define CCSANDBOX_POLICY_PLAN_PROBE_H_

#include <string>

#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

// Facts gathered about the host; gathering is I/O and lives in the broker.
struct HostFacts {
  enum class Os { kLinux, kMacOs, kOther };
  Os os = Os::kOther;
  bool wsl2 = false;
  bool has_bwrap = false;
  bool has_socat = false;
  bool has_sandbox_exec = false;
};

v1::ProbeResult EvaluateProbe(const HostFacts& facts);

// The boot line's filename-pattern part where the OS sandbox itself enforces the denies (macOS:
// the Seatbelt profile denies writing .env, *.key, *.pem at any depth), or "" where the
// launcher's create guard must be asked (Linux).
std::string NativeFilenameEnforcement(const HostFacts& facts);

// Exactly one of: "agent sandbox ON (<note>)", "no OS-native agent sandbox on this host
// (<hint>)", "agent sandbox DISABLED by --sandbox off".
std::string BootLine(const v1::ProbeResult& probe, bool sandbox_enabled);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_PROBE_H_
