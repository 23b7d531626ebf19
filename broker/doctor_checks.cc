#include "broker/doctor_checks.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "broker/cli_json.h"
#include "google/protobuf/struct.pb.h"

namespace ccsandbox::broker {
namespace {

using Checks = std::vector<DoctorCheck>;

DoctorCheck Ok(std::string name, std::string detail) {
  return {std::move(name), CheckStatus::kOk, std::move(detail), ""};
}
DoctorCheck Warn(std::string name, std::string detail, std::string fix) {
  return {std::move(name), CheckStatus::kWarn, std::move(detail), std::move(fix)};
}
DoctorCheck Failed(std::string name, std::string detail, std::string fix) {
  return {std::move(name), CheckStatus::kFail, std::move(detail), std::move(fix)};
}

bool BrokerAnswered(const DoctorFacts& f) { return f.broker.error.empty(); }

// Whether the broker asked its launcher (only with the sandbox on and a native backend).
bool LauncherAsked(const DoctorFacts& f) {
  return BrokerAnswered(f) && f.broker.probe.sandbox_enabled() &&
         f.broker.probe.result().available();
}

// What only the launcher knows is unknown while it does not answer: the launcher line FAILs.
bool LauncherSilent(const DoctorFacts& f) {
  return LauncherAsked(f) && !f.broker.probe.launcher_answered();
}

DoctorCheck UnknownWithoutLauncher(std::string name, std::string found) {
  return Warn(std::move(name), absl::StrCat(found, "unknown: the launcher did not answer"),
              "see the launcher line");
}

void Broker(const DoctorFacts& f, Checks& out) {
  if (BrokerAnswered(f)) {
    out.push_back(Ok("broker", absl::StrCat("answered at ", f.broker.address)));
    return;
  }
  out.push_back(Failed("broker", f.broker.error,
                       absl::StrCat("start it (sudo systemctl start ccsandbox-broker, or "
                                    "sandbox_brokerd --listen=",
                                    f.broker.address,
                                    " --launcher=unix:LAUNCHER_SOCKET), or name the one to ask "
                                    "with --broker=ADDR or $CCSANDBOX_BROKER")));
}

void Probe(const DoctorFacts& f, Checks& out) {
  if (!BrokerAnswered(f)) return;
  const v1::ProbeResponse& p = f.broker.probe;
  if (!p.sandbox_enabled()) {
    out.push_back(Failed("probe", p.status_line(),
                         "restart the broker without --sandbox=off (CC_SERVER_SANDBOX=on)"));
  } else if (!p.result().available()) {
    out.push_back(
        Failed("probe", absl::StrCat(p.status_line(), ": ", p.result().note()),
               p.result().install_hint().empty()
                   ? "no native sandbox backend is offered on this platform"
                   : std::string(absl::StripPrefix(p.result().install_hint(), "install: "))));
  } else {
    out.push_back(Ok("probe", p.status_line()));
  }
}

void Tool(absl::string_view name, absl::string_view package, const ToolFacts& tool, Checks& out) {
  if (tool.path.empty()) {
    out.push_back(Failed(std::string(name), "not found on PATH",
                         absl::StrCat("sudo apt-get install ", package)));
    return;
  }
  out.push_back(
      Ok(std::string(name),
         absl::StrCat(tool.path, " (", tool.version.empty() ? "no version" : tool.version, ")")));
}

void Tools(const DoctorFacts& f, Checks& out) {
  Tool("bwrap", "bubblewrap", f.bwrap, out);
  Tool("socat", "socat", f.socat, out);
}

std::string SysctlValue(const UserNamespaceFacts& u, absl::string_view name) {
  for (const auto& [n, v] : u.sysctls) {
    if (n == name) return v;
  }
  return "";
}

void UserNamespaces(const DoctorFacts& f, Checks& out) {
  const UserNamespaceFacts& u = f.userns;
  std::vector<std::string> sysctls;
  for (const auto& [name, value] : u.sysctls) sysctls.push_back(absl::StrCat(name, "=", value));
  const std::string found =
      absl::StrCat(sysctls.empty() ? "no userns sysctls" : absl::StrJoin(sysctls, ", "), "; ");
  if (u.unshare_error.empty()) {
    out.push_back(Ok("user namespaces",
                     absl::StrCat(found, "unshare(CLONE_NEWUSER) as ", u.tried_as, " worked")));
    return;
  }
  std::string fix = "allow unprivileged user namespaces (bwrap needs them)";
  if (SysctlValue(u, "user.max_user_namespaces") == "0") {
    fix = "sudo sysctl -w user.max_user_namespaces=15000";
  } else if (SysctlValue(u, "kernel.unprivileged_userns_clone") == "0") {
    fix = "sudo sysctl -w kernel.unprivileged_userns_clone=1";
  } else if (SysctlValue(u, "kernel.apparmor_restrict_unprivileged_userns") == "1") {
    fix =
        "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor "
        "profile that lets bwrap create user namespaces)";
  }
  out.push_back(Failed(
      "user namespaces",
      absl::StrCat(found, "unshare(CLONE_NEWUSER) as ", u.tried_as, " failed: ", u.unshare_error),
      std::move(fix)));
}

void Landlock(const DoctorFacts& f, Checks& out) {
  if (f.landlock_abi > 0) {
    out.push_back(Ok("landlock", absl::StrCat("ABI ", f.landlock_abi)));
    return;
  }
  out.push_back(Failed("landlock", absl::StrCat("not available: ", f.landlock_error),
                       "a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in its lsm= boot "
                       "parameter (Debian 12's 6.1 has it)"));
}

void Seccomp(const DoctorFacts& f, Checks& out) {
  const SeccompFacts& s = f.seccomp;
  const std::string kernel = absl::StrCat("Linux ", s.kernel);
  if (!s.notif_sizes_error.empty()) {
    out.push_back(
        Failed("seccomp user notification",
               absl::StrCat(kernel, ": SECCOMP_GET_NOTIF_SIZES refused: ", s.notif_sizes_error),
               "a kernel with CONFIG_SECCOMP_FILTER, Linux 5.19 or later"));
    return;
  }
  if (!s.listener_missing.empty()) {
    out.push_back(Failed("seccomp user notification",
                         absl::StrCat(kernel, ": ", s.notif_sizes, "; ", s.listener_missing),
                         "Linux 5.19 or later (Debian 12: bookworm's 6.1 kernel)"));
    return;
  }
  // WAIT_KILLABLE_RECV is 5.19: the listener, ADDFD (5.9) and ADDFD_FLAG_SEND (5.14) are older.
  out.push_back(Ok("seccomp user notification",
                   absl::StrCat(kernel, ": ", s.notif_sizes,
                                "; a listener filter with WAIT_KILLABLE_RECV installs, so "
                                "SECCOMP_IOCTL_NOTIF_ADDFD with ADDFD_FLAG_SEND is there")));
}

void FilenameDenies(const DoctorFacts& f, Checks& out) {
  if (!LauncherAsked(f)) return;
  if (LauncherSilent(f)) {
    out.push_back(UnknownWithoutLauncher("filename-pattern enforcement", ""));
    return;
  }
  const v1::ProbeResponse& p = f.broker.probe;
  if (p.filename_denies_enforced()) {
    out.push_back(Ok("filename-pattern enforcement", p.filename_denies_note()));
    return;
  }
  out.push_back(Failed(
      "filename-pattern enforcement", p.filename_denies_note(),
      "run sandbox_launcherd as root on a kernel with Landlock and seccomp user notification "
      "(the lines above); until then writable runs are refused unless they pass "
      "--no-filename-denies"));
}

std::string CgroupText(const CgroupFacts& c) {
  if (c.version == 0) return "no cgroup file system mounted";
  return absl::StrCat("host cgroup v", c.version, " (",
                      c.controllers.empty() ? "no controllers" : absl::StrJoin(c.controllers, " "),
                      ")");
}

void Cgroups(const DoctorFacts& f, Checks& out) {
  const std::string host = CgroupText(f.cgroups);
  if (!LauncherAsked(f)) {
    out.push_back(Ok("cgroups", host));
    return;
  }
  if (LauncherSilent(f)) {
    out.push_back(UnknownWithoutLauncher("cgroups", absl::StrCat(host, "; resource limits ")));
    return;
  }
  const v1::ProbeResponse& p = f.broker.probe;
  const std::string detail = absl::StrCat(host, "; resource limits ", p.resource_limits_note());
  if (p.resource_limits_enforced()) {
    out.push_back(Ok("cgroups", detail));
    return;
  }
  out.push_back(Warn("cgroups", detail,
                     "give the launcher a delegated cgroup (systemd Delegate=yes, as "
                     "packaging/systemd/ccsandbox-launcher.service does) and --cgroups=auto"));
}

void Launcher(const DoctorFacts& f, Checks& out) {
  if (!BrokerAnswered(f)) return;
  const v1::ProbeResponse& p = f.broker.probe;
  if (!LauncherAsked(f)) {
    out.push_back(Warn("launcher", "not asked: the broker runs nothing in a sandbox here",
                       "see the probe line"));
    return;
  }
  if (p.launcher_answered()) {
    out.push_back(Ok("launcher", p.launcher_note()));
    return;
  }
  out.push_back(Failed("launcher", p.launcher_note(),
                       "start it (sudo systemctl start ccsandbox-launcher), and list the "
                       "broker's uid in its --allowed-uids"));
}

void MicroVm(const DoctorFacts& f, Checks& out) {
  if (!BrokerAnswered(f)) return;
  const v1::ProbeResult& m = f.broker.probe.microvm();
  if (m.available()) {
    out.push_back(Ok("microvm", m.note()));
    return;
  }
  // Only terminals and rigs run in a microVM, never command wrapping: never required.
  out.push_back(Warn("microvm", m.note().empty() ? "no microVM runtime was probed" : m.note(),
                     "only terminals and rigs use it; configure a hypervisor and guest image "
                     "to offer it"));
}

std::string SessionText(const v1::SandboxHandle& h) {
  auto lower = [](const std::string& name, absl::string_view prefix) {
    return absl::AsciiStrToLower(absl::StripPrefix(name, prefix));
  };
  std::string text = absl::StrCat(h.session_id(), " (",
                                  lower(v1::SandboxBackend_Name(h.backend()), "SANDBOX_BACKEND_"),
                                  ", ", lower(v1::SandboxState_Name(h.state()), "SANDBOX_STATE_"));
  auto egress = h.details().fields().find("egress");
  if (egress != h.details().fields().end()) {
    absl::StrAppend(&text, ", egress ", egress->second.string_value());
  }
  if (h.state() == v1::SANDBOX_STATE_ERROR) absl::StrAppend(&text, ": ", h.error().message());
  return absl::StrCat(text, ")");
}

void Sessions(const DoctorFacts& f, Checks& out) {
  if (!BrokerAnswered(f)) return;
  if (!f.broker.sessions_error.empty()) {
    out.push_back(Warn("sessions", absl::StrCat("ListSessions failed: ", f.broker.sessions_error),
                       "see the broker's log"));
    return;
  }
  std::vector<std::string> each;
  std::string failed;
  for (const v1::SandboxHandle& h : f.broker.sessions) {
    each.push_back(SessionText(h));
    if (h.state() == v1::SANDBOX_STATE_ERROR && failed.empty()) failed = h.session_id();
  }
  const std::string detail = absl::StrCat(f.broker.sessions.size(), " open",
                                          each.empty() ? "" : ": ", absl::StrJoin(each, "; "));
  if (failed.empty()) {
    out.push_back(Ok("sessions", detail));
    return;
  }
  out.push_back(
      Warn("sessions", detail,
           absl::StrCat("a session in state error runs nothing: sandboxctl session "
                        "show ",
                        failed, " says why, sandboxctl session stop ", failed, " ends it")));
}

// The violation of `action` (a prefix: "file-write" covers file-write* and -create) on `target`.
const v1::SandboxViolation* FindViolation(const SelfTestFacts& t, absl::string_view action,
                                          absl::string_view target) {
  for (const v1::SandboxViolation& v : t.violations) {
    if (absl::StartsWith(v.action(), action) && v.target() == target) return &v;
  }
  return nullptr;
}

void Denial(const SelfTestFacts& t, absl::string_view name, absl::string_view action,
            const std::string& target, bool host_unchanged, absl::string_view unchanged_text,
            Checks& out) {
  const v1::SandboxViolation* seen = FindViolation(t, action, target);
  if (seen != nullptr && host_unchanged) {
    out.push_back(Ok(std::string(name), absl::StrCat("violation ", seen->action(), " ",
                                                     seen->target(), unchanged_text)));
    return;
  }
  out.push_back(
      Failed(std::string(name),
             seen == nullptr
                 ? absl::StrCat("no ", action, "* violation for ", target, " in the event stream")
                 : absl::StrCat("violation seen, but ", target, " was changed on the host"),
             "the sandbox does not enforce what the probe says: see the broker's and "
             "the launcher's logs"));
}

void SelfTest(const DoctorFacts& f, Checks& out) {
  if (!f.self_test.has_value()) {
    if (!BrokerAnswered(f)) {
      out.push_back(
          Failed("self-test", "not run: no broker to run it", "start the broker (see above)"));
    }
    return;
  }
  const SelfTestFacts& t = *f.self_test;
  if (t.stop_signal != 0) {
    out.push_back(Failed("self-test",
                         absl::StrCat("interrupted by signal ", t.stop_signal,
                                      " (its session and work tree were removed)"),
                         "run sandboxctl doctor again"));
    return;
  }
  if (!t.error.empty()) {
    const v1::ProbeResult& probe = f.broker.probe.result();
    out.push_back(Failed("self-test", absl::StrCat("a native session could not run: ", t.error),
                         probe.install_hint().empty()
                             ? "fix the FAIL lines above"
                             : std::string(absl::StripPrefix(probe.install_hint(), "install: "))));
    return;
  }
  if (!t.control_write_landed) {
    out.push_back(Failed("self-test",
                         absl::StrCat("the command could not write its own work tree ", t.workdir),
                         "the sandbox's uid must be able to write where it is bound"));
  } else {
    out.push_back(Ok("self-test", absl::StrCat("ran a native session in ", t.workdir)));
  }
  Denial(t, "self-test: denied write", "file-write", t.protected_file, t.protected_unchanged,
         " (the protected file is unchanged)", out);
  Denial(t, "self-test: denied .env create", "file-write", t.env_file, t.env_absent,
         " (no .env was made)", out);
  Denial(t, "self-test: denied connection", "network-outbound", t.denied_target, true, "", out);
}

using CheckFn = void (*)(const DoctorFacts&, Checks&);

// In the order a person goes through them.
constexpr CheckFn kChecks[] = {Broker,   Probe,   Tools,    UserNamespaces,
                               Landlock, Seccomp, Launcher, FilenameDenies,
                               Cgroups,  MicroVm, Sessions, SelfTest};

}  // namespace

std::vector<DoctorCheck> DoctorChecks(const DoctorFacts& facts) {
  Checks checks;
  for (CheckFn check : kChecks) check(facts, checks);
  return checks;
}

std::string StatusWord(CheckStatus status) {
  switch (status) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kFail:
      return "FAIL";
  }
  return "FAIL";
}

std::string DoctorText(const std::vector<DoctorCheck>& checks) {
  std::string text;
  for (const DoctorCheck& c : checks) {
    std::string word = StatusWord(c.status);
    word.resize(4, ' ');
    absl::StrAppend(&text, word, "  ", c.name, ": ", c.detail,
                    c.fix.empty() ? "" : absl::StrCat("; fix: ", c.fix), "\n");
  }
  return text;
}

std::string DoctorJson(const std::vector<DoctorCheck>& checks) {
  // Written by hand to keep the keys in this order (a Struct's map prints in any order); each
  // string is escaped by the JSON printer.
  auto quoted = [](const std::string& text) {
    google::protobuf::Value value;
    value.set_string_value(text);
    return JsonLine(value);
  };
  std::vector<std::string> entries;
  for (const DoctorCheck& c : checks) {
    entries.push_back(
        absl::StrCat("{\"name\":", quoted(c.name),
                     ",\"status\":", quoted(absl::AsciiStrToLower(StatusWord(c.status))),
                     ",\"detail\":", quoted(c.detail), ",\"fix\":", quoted(c.fix), "}"));
  }
  return absl::StrCat("{\"ok\":", DoctorExitCode(checks) == 0 ? "true" : "false", ",\"checks\":[",
                      absl::StrJoin(entries, ","), "]}");
}

int DoctorExitCode(const std::vector<DoctorCheck>& checks) {
  return std::any_of(checks.begin(), checks.end(),
                     [](const DoctorCheck& c) { return c.status == CheckStatus::kFail; })
             ? 1
             : 0;
}

}  // namespace ccsandbox::broker
