#include "policy/plan/backend.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ccsandbox::policy {
namespace {

std::optional<v1::SandboxBackend> KnownName(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower == "none") return v1::SANDBOX_BACKEND_NONE;
  if (lower == "native" || lower == "docker") return v1::SANDBOX_BACKEND_NATIVE;
  if (lower == "microvm") return v1::SANDBOX_BACKEND_MICROVM;
  return std::nullopt;
}

const std::string& ProbeHint(const HostSandbox& host) {
  return host.probe.install_hint().empty() ? host.probe.note() : host.probe.install_hint();
}

std::string MicrovmMissing(const HostSandbox& host) {
  return host.microvm.note().empty() ? std::string("no microVM runtime was probed")
                                     : host.microvm.note();
}

absl::Status MicrovmUnavailable(const HostSandbox& host) {
  return absl::FailedPreconditionError(absl::StrCat(
      "backend: microvm requested but this host cannot boot a microVM (", MicrovmMissing(host),
      "); an explicit microvm request never falls back to native or none"));
}

}  // namespace

v1::SandboxBackend BackendFromName(std::optional<absl::string_view> name) {
  if (!name.has_value()) return v1::SANDBOX_BACKEND_NONE;
  return KnownName(*name).value_or(v1::SANDBOX_BACKEND_NONE);
}

absl::string_view BackendName(v1::SandboxBackend backend) {
  switch (backend) {
    case v1::SANDBOX_BACKEND_NONE:
      return "none";
    case v1::SANDBOX_BACKEND_NATIVE:
      return "native";
    case v1::SANDBOX_BACKEND_MICROVM:
      return "microvm";
    default:
      return "unspecified";
  }
}

absl::StatusOr<BackendChoice> SelectBackend(absl::string_view requested_name,
                                            const HostSandbox& host) {
  BackendChoice choice;
  const bool native_ok = host.sandbox_enabled && host.probe.available();
  if (requested_name.empty()) {
    if (native_ok) {
      choice.actual = v1::SANDBOX_BACKEND_NATIVE;
      choice.note = absl::StrCat("dispatch default: ", host.probe.note());
    } else if (!host.sandbox_enabled) {
      choice.note = "unsandboxed: agent sandbox DISABLED by --sandbox off";
    } else {
      choice.note = absl::StrCat("unsandboxed: no OS-native agent sandbox on this host (",
                                 ProbeHint(host), ")");
    }
    return choice;
  }
  const std::optional<v1::SandboxBackend> known = KnownName(requested_name);
  if (!known.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("backend: unknown backend name '", requested_name,
                     "'; expected one of native, docker, none, microvm (an explicit request "
                     "is refused rather than run unsandboxed)"));
  }
  choice.requested = *known;
  switch (*known) {
    case v1::SANDBOX_BACKEND_NONE:
      choice.note = "unsandboxed: none requested explicitly";
      return choice;
    case v1::SANDBOX_BACKEND_NATIVE:
      if (!host.sandbox_enabled) {
        return absl::FailedPreconditionError(
            "backend: native requested but the agent sandbox is DISABLED by --sandbox off");
      }
      if (!host.probe.available()) {
        return absl::FailedPreconditionError(
            absl::StrCat("backend: native requested but no OS-native agent sandbox on this host (",
                         ProbeHint(host), ")"));
      }
      choice.actual = v1::SANDBOX_BACKEND_NATIVE;
      choice.note = host.probe.note();
      return choice;
    default:
      // "I asked for a VM and it took my laptop" is the downgrade a sandbox cannot afford.
      if (!host.microvm.available()) return MicrovmUnavailable(host);
      // The caller runs it on a microVM runtime or refuses; never as native or none.
      choice.actual = v1::SANDBOX_BACKEND_MICROVM;
      choice.note = host.microvm.note();
      return choice;
  }
}

absl::StatusOr<BackendChoice> SelectTerminalBackend(absl::string_view requested_name,
                                                    absl::string_view default_name,
                                                    const HostSandbox& host) {
  const bool by_default = requested_name.empty();
  const absl::string_view name =
      by_default ? (default_name.empty() ? absl::string_view("none") : default_name)
                 : requested_name;
  const std::optional<v1::SandboxBackend> known = KnownName(name);
  if (!known.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("backend: unknown terminal backend name '", name,
                                                   "'; expected one of none, native, microvm"));
  }
  BackendChoice choice;
  choice.requested = by_default ? v1::SANDBOX_BACKEND_UNSPECIFIED : *known;
  if (*known == v1::SANDBOX_BACKEND_MICROVM) {
    if (host.microvm.available()) {
      choice.actual = v1::SANDBOX_BACKEND_MICROVM;
      choice.note = host.microvm.note();
      return choice;
    }
    if (!by_default) return MicrovmUnavailable(host);
  }
  if (*known == v1::SANDBOX_BACKEND_NONE) {
    choice.note = by_default ? "the host shell: none is the terminal default"
                             : "the host shell: none requested explicitly";
    return choice;
  }
  // native, asked for or the degraded microvm default.
  const std::string why = *known == v1::SANDBOX_BACKEND_MICROVM
                              ? absl::StrCat("the terminal default microvm is unavailable (",
                                             MicrovmMissing(host), "); degraded to native")
                              : std::string("native requested");
  if (!host.sandbox_enabled) {
    return absl::FailedPreconditionError(
        absl::StrCat("backend: ", why,
                     ", but the agent sandbox is DISABLED by --sandbox off; a terminal "
                     "never shows a native label on a host-shell PTY"));
  }
  if (!host.probe.available()) {
    return absl::FailedPreconditionError(
        absl::StrCat("backend: ", why, ", but this host cannot wrap a shell (", ProbeHint(host),
                     "); a terminal never shows a native label on a host-shell PTY"));
  }
  choice.actual = v1::SANDBOX_BACKEND_NATIVE;
  choice.note = absl::StrCat(why, ": ", host.probe.note());
  return choice;
}

}  // namespace ccsandbox::policy
