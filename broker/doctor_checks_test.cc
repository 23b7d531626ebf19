#include "broker/doctor_checks.h"

#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ccsandbox::broker {
namespace {

constexpr char kWork[] = "/var/tmp/ccsandbox-doctor.abc";

v1::SandboxViolation Violation(const std::string& action, const std::string& target) {
  v1::SandboxViolation v;
  v.set_action(action);
  v.set_target(target);
  return v;
}

// A healthy Debian 12 host with its broker and launcher: every check ok but the microVM's.
DoctorFacts Healthy() {
  DoctorFacts f;
  f.bwrap = {"/usr/bin/bwrap", "bubblewrap 0.8.0"};
  f.socat = {"/usr/bin/socat", "socat version 1.7.4.4"};
  f.userns.sysctls = {{"user.max_user_namespaces", "15000"}};
  f.userns.tried_as = "uid 65534";
  f.landlock_abi = 3;
  f.seccomp.kernel = "6.1.0-28-amd64";
  f.seccomp.notif_sizes = "SECCOMP_GET_NOTIF_SIZES: notif 80, resp 24, data 64 bytes";
  f.cgroups = {2, {"cpu", "memory", "pids"}};
  f.broker.address = "unix:/run/ccsandbox-broker/broker.sock";
  v1::ProbeResponse& p = f.broker.probe;
  p.mutable_result()->set_available(true);
  p.set_sandbox_enabled(true);
  p.set_status_line("agent sandbox ON (bubblewrap — namespace isolation, no kernel boundary)");
  p.set_filename_denies_enforced(true);
  p.set_filename_denies_note("enforced at creation time (Landlock ABI 3)");
  p.set_resource_limits_enforced(true);
  p.set_resource_limits_note("enforced with cgroup v2");
  p.set_launcher_answered(true);
  p.set_launcher_note("answered at unix:/run/ccsandbox/launcher.sock (peer check passed)");
  SelfTestFacts t;
  t.workdir = kWork;
  t.protected_file = absl::StrCat(kWork, "/protected.txt");
  t.env_file = absl::StrCat(kWork, "/.env");
  t.denied_target = "doctor-self-test.invalid:443";
  t.violations = {Violation("file-write*", t.protected_file),
                  Violation("file-write-create", t.env_file),
                  Violation("network-outbound", t.denied_target)};
  t.control_write_landed = t.protected_unchanged = t.env_absent = true;
  f.self_test = t;
  return f;
}

// What sandboxctl finds when nothing listens on the broker's socket.
void NoBroker(DoctorFacts& f) {
  f.broker.error = "no broker at unix:/run/x.sock (socket missing)";
  f.self_test.reset();
}

const DoctorCheck* Find(const std::vector<DoctorCheck>& checks, const std::string& name) {
  for (const DoctorCheck& c : checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST(DoctorChecks, AHealthyHostIsAllOkButTheMicroVmAndExitsZero) {
  const std::vector<DoctorCheck> checks = DoctorChecks(Healthy());
  for (const DoctorCheck& c : checks) {
    EXPECT_EQ(c.status, c.name == "microvm" ? CheckStatus::kWarn : CheckStatus::kOk)
        << c.name << ": " << c.detail;
  }
  for (const char* name : {"broker", "probe", "bwrap", "socat", "user namespaces", "landlock",
                           "seccomp user notification", "launcher", "filename-pattern enforcement",
                           "cgroups", "microvm", "sessions", "self-test", "self-test: denied write",
                           "self-test: denied .env create", "self-test: denied connection"}) {
    EXPECT_NE(Find(checks, name), nullptr) << name;
  }
  EXPECT_EQ(DoctorExitCode(checks), 0);
}

struct Case {
  std::string what;
  std::function<void(DoctorFacts&)> change;
  std::string check;     // the line it shows on
  CheckStatus status;    // and its status
  std::string line_has;  // in that line's text (detail and fix)
  int exit_code;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.what; }

class DoctorCheckCases : public ::testing::TestWithParam<Case> {};

TEST_P(DoctorCheckCases, ShowOnTheirLineWithTheFix) {
  const Case& c = GetParam();
  DoctorFacts facts = Healthy();
  c.change(facts);
  const std::vector<DoctorCheck> checks = DoctorChecks(facts);
  const DoctorCheck* check = Find(checks, c.check);
  ASSERT_NE(check, nullptr) << DoctorText(checks);
  EXPECT_EQ(check->status, c.status) << DoctorText(checks);
  const std::string line = DoctorText({*check});
  EXPECT_TRUE(absl::StrContains(line, c.line_has)) << line;
  EXPECT_EQ(DoctorExitCode(checks), c.exit_code) << DoctorText(checks);
}

INSTANTIATE_TEST_SUITE_P(
    Table, DoctorCheckCases,
    ::testing::Values(
        Case{"NoBwrap", [](DoctorFacts& f) { f.bwrap = {}; }, "bwrap", CheckStatus::kFail,
             "FAIL  bwrap: not found on PATH; fix: sudo apt-get install bubblewrap\n", 1},
        Case{"NoSocat", [](DoctorFacts& f) { f.socat = {}; }, "socat", CheckStatus::kFail,
             "fix: sudo apt-get install socat", 1},
        Case{"ProbeMissingTools",
             [](DoctorFacts& f) {
               v1::ProbeResult& r = *f.broker.probe.mutable_result();
               r.set_available(false);
               r.set_note("Linux host missing bubblewrap and socat");
               r.set_install_hint("install: sudo apt-get install bubblewrap socat");
               f.self_test->error = "Launch: backend native is not available";
             },
             "probe", CheckStatus::kFail, "fix: sudo apt-get install bubblewrap socat", 1},
        Case{"SelfTestWithoutNativeBackendGivesTheProbesHint",
             [](DoctorFacts& f) {
               f.broker.probe.mutable_result()->set_available(false);
               f.broker.probe.mutable_result()->set_install_hint(
                   "install: sudo apt-get install bubblewrap socat");
               f.self_test->error = "Launch: backend native is not available";
             },
             "self-test", CheckStatus::kFail, "fix: sudo apt-get install bubblewrap socat", 1},
        Case{"SandboxOff", [](DoctorFacts& f) { f.broker.probe.set_sandbox_enabled(false); },
             "probe", CheckStatus::kFail, "without --sandbox=off", 1},
        Case{"NoUserNamespaces",
             [](DoctorFacts& f) {
               f.userns.sysctls = {{"user.max_user_namespaces", "0"}};
               f.userns.unshare_error = "No space left on device";
             },
             "user namespaces", CheckStatus::kFail,
             "fix: sudo sysctl -w user.max_user_namespaces=15000", 1},
        Case{"DebianUnprivilegedUsernsCloneOff",
             [](DoctorFacts& f) {
               f.userns.sysctls = {{"user.max_user_namespaces", "15000"},
                                   {"kernel.unprivileged_userns_clone", "0"}};
               f.userns.unshare_error = "Operation not permitted";
             },
             "user namespaces", CheckStatus::kFail,
             "fix: sudo sysctl -w kernel.unprivileged_userns_clone=1", 1},
        Case{"NoLandlock",
             [](DoctorFacts& f) {
               f.landlock_abi = 0;
               f.landlock_error = "Landlock is disabled at boot";
             },
             "landlock", CheckStatus::kFail, "not available: Landlock is disabled at boot", 1},
        Case{"OldSeccomp",
             [](DoctorFacts& f) {
               f.seccomp.listener_missing =
                   "seccomp: the kernel lacks SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV";
             },
             "seccomp user notification", CheckStatus::kFail, "fix: Linux 5.19 or later", 1},
        Case{"LauncherPeerCheckRefusesTheBroker",
             [](DoctorFacts& f) {
               f.broker.probe.set_launcher_answered(false);
               f.broker.probe.set_launcher_note(
                   "launcher probe failed: this uid is not allowed to use the sandbox launcher");
             },
             "launcher", CheckStatus::kFail, "--allowed-uids", 1},
        Case{"WhatOnlyTheLauncherKnowsIsUnknownWithoutIt",
             [](DoctorFacts& f) { f.broker.probe.set_launcher_answered(false); },
             "filename-pattern enforcement", CheckStatus::kWarn,
             "unknown: the launcher did not answer", 1},
        Case{"FilenameDeniesNotEnforced",
             [](DoctorFacts& f) {
               f.broker.probe.set_filename_denies_enforced(false);
               f.broker.probe.set_filename_denies_note("the launcher does not run as root");
             },
             "filename-pattern enforcement", CheckStatus::kFail, "--no-filename-denies", 1},
        Case{"NoResourceLimitsIsOnlyAWarning",
             [](DoctorFacts& f) {
               f.broker.probe.set_resource_limits_enforced(false);
               f.broker.probe.set_resource_limits_note("NOT enforced: no writable cgroup");
             },
             "cgroups", CheckStatus::kWarn, "Delegate=yes", 0},
        Case{"NoMicroVmIsNeverAFailure",
             [](DoctorFacts& f) {
               f.broker.probe.mutable_microvm()->set_note("no hypervisor configured");
             },
             "microvm", CheckStatus::kWarn, "no hypervisor configured", 0},
        Case{"MicroVm",
             [](DoctorFacts& f) {
               f.broker.probe.mutable_microvm()->set_available(true);
               f.broker.probe.mutable_microvm()->set_note("qemu microvm, KVM");
             },
             "microvm", CheckStatus::kOk, "qemu microvm, KVM", 0},
        Case{"SessionsAndTheirProxies",
             [](DoctorFacts& f) {
               v1::SandboxHandle h;
               h.set_session_id("s1");
               h.set_backend(v1::SANDBOX_BACKEND_NATIVE);
               h.set_state(v1::SANDBOX_STATE_WARM);
               (*h.mutable_details()->mutable_fields())["egress"].set_string_value(
                   "proxies on, 50 allow entries");
               f.broker.sessions = {h};
             },
             "sessions", CheckStatus::kOk, "1 open: s1 (native, warm, egress proxies on, 50", 0},
        Case{"SessionInError",
             [](DoctorFacts& f) {
               v1::SandboxHandle h;
               h.set_session_id("s2");
               h.set_state(v1::SANDBOX_STATE_ERROR);
               h.mutable_error()->set_message("its sandbox died");
               f.broker.sessions = {h};
             },
             "sessions", CheckStatus::kWarn, "sandboxctl session stop s2", 0},
        Case{"NoBroker", NoBroker, "broker", CheckStatus::kFail,
             "no broker at unix:/run/x.sock (socket missing)", 1},
        Case{"NoBrokerNoSelfTest", NoBroker, "self-test", CheckStatus::kFail, "not run", 1},
        Case{"NoEnvViolation",
             [](DoctorFacts& f) {
               f.self_test->violations.erase(f.self_test->violations.begin() + 1);
             },
             "self-test: denied .env create", CheckStatus::kFail,
             "no file-write* violation for /var/tmp/ccsandbox-doctor.abc/.env", 1},
        Case{"NoNetworkViolation", [](DoctorFacts& f) { f.self_test->violations.pop_back(); },
             "self-test: denied connection", CheckStatus::kFail,
             "no network-outbound* violation for doctor-self-test.invalid:443", 1},
        Case{"ViolationButTheFileChanged",
             [](DoctorFacts& f) { f.self_test->protected_unchanged = false; },
             "self-test: denied write", CheckStatus::kFail, "was changed on the host", 1},
        Case{"Interrupted",
             [](DoctorFacts& f) {
               f.self_test->stop_signal = 2;
               f.self_test->error = "interrupted by signal 2";
             },
             "self-test", CheckStatus::kFail, "interrupted by signal 2 (its session", 1},
        Case{"TheWorkTreeWasNotWritable",
             [](DoctorFacts& f) { f.self_test->control_write_landed = false; }, "self-test",
             CheckStatus::kFail, "could not write its own work tree", 1}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.what; });

TEST(DoctorChecks, NoBrokerLeavesOutWhatOnlyTheBrokerKnows) {
  DoctorFacts facts = Healthy();
  NoBroker(facts);
  const std::vector<DoctorCheck> checks = DoctorChecks(facts);
  for (const char* name : {"probe", "launcher", "filename-pattern enforcement", "microvm",
                           "sessions", "self-test: denied write"}) {
    EXPECT_EQ(Find(checks, name), nullptr) << name;
  }
  ASSERT_NE(Find(checks, "bwrap"), nullptr);  // the host is still checked
}

TEST(DoctorChecks, TextIsOneLinePerCheck) {
  const std::string text = DoctorText(
      {{"bwrap", CheckStatus::kOk, "/usr/bin/bwrap (bubblewrap 0.8.0)", ""},
       {"cgroups", CheckStatus::kWarn, "not enforced", "delegate"},
       {"socat", CheckStatus::kFail, "not found on PATH", "sudo apt-get install socat"}});
  EXPECT_EQ(text,
            "ok    bwrap: /usr/bin/bwrap (bubblewrap 0.8.0)\n"
            "warn  cgroups: not enforced; fix: delegate\n"
            "FAIL  socat: not found on PATH; fix: sudo apt-get install socat\n");
}

TEST(DoctorChecks, JsonHasEveryCheckInOrderEscaped) {
  const std::vector<DoctorCheck> checks = {
      {"bwrap", CheckStatus::kOk, "say \"hi\"\n", ""},
      {"socat", CheckStatus::kFail, "not found", "sudo apt-get install socat"}};
  EXPECT_EQ(DoctorJson(checks),
            R"({"ok":false,"checks":[{"name":"bwrap","status":"ok","detail":"say \"hi\"\n",)"
            R"("fix":""},{"name":"socat","status":"fail","detail":"not found",)"
            R"("fix":"sudo apt-get install socat"}]})");
  EXPECT_TRUE(absl::StartsWith(DoctorJson({checks[0]}), R"({"ok":true,)"));
}

TEST(DoctorChecks, AnyFailIsANonZeroExit) {
  EXPECT_EQ(DoctorExitCode({}), 0);
  EXPECT_EQ(DoctorExitCode({{"a", CheckStatus::kWarn, "", ""}}), 0);
  EXPECT_EQ(DoctorExitCode({{"a", CheckStatus::kOk, "", ""}, {"b", CheckStatus::kFail, "", ""}}),
            1);
}

}  // namespace
}  // namespace ccsandbox::broker
