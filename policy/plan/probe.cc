#include "policy/plan/probe.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccsandbox::policy {

v1::ProbeResult EvaluateProbe(const HostFacts& facts) {
  v1::ProbeResult result;
  switch (facts.os) {
    case HostFacts::Os::kMacOs:
      if (facts.has_sandbox_exec) {
        result.set_available(true);
        result.set_backend(v1::SANDBOX_BACKEND_NATIVE);
        result.set_note("sandbox-exec (Seatbelt) — namespace isolation, no kernel boundary");
      } else {
        result.set_note("sandbox-exec not found at /usr/bin/sandbox-exec");
      }
      return result;
    case HostFacts::Os::kLinux: {
      if (!facts.has_bwrap) result.add_missing("bubblewrap");
      if (!facts.has_socat) result.add_missing("socat");
      if (result.missing().empty()) {
        result.set_available(true);
        result.set_backend(v1::SANDBOX_BACKEND_NATIVE);
        result.set_note(absl::StrCat("bubblewrap — namespace isolation, no kernel boundary",
                                     facts.wsl2 ? " (WSL2)" : ""));
        return result;
      }
      result.set_requires_install(true);
      result.set_note(absl::StrCat(facts.wsl2 ? "WSL2" : "Linux", " host missing ",
                                   absl::StrJoin(result.missing(), " and ")));
      result.set_install_hint(
          absl::StrCat("install: sudo apt-get install ", absl::StrJoin(result.missing(), " ")));
      return result;
    }
    case HostFacts::Os::kOther:
      break;
  }
  result.set_note("the native sandbox is not offered on this platform");
  return result;
}

std::string NativeFilenameEnforcement(const HostFacts& facts) {
  if (facts.os != HostFacts::Os::kMacOs || !facts.has_sandbox_exec) return "";
  return "filename-pattern denies (.env, *.key, *.pem) enforced natively by the Seatbelt profile";
}

std::string BootLine(const v1::ProbeResult& probe, bool sandbox_enabled) {
  if (!sandbox_enabled) return "agent sandbox DISABLED by --sandbox off";
  if (probe.available()) return absl::StrCat("agent sandbox ON (", probe.note(), ")");
  return absl::StrCat("no OS-native agent sandbox on this host (",
                      probe.install_hint().empty() ? probe.note() : probe.install_hint(), ")");
}

}  // namespace ccsandbox::policy
