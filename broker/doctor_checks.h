// `sandboxctl doctor`'s judgement, pure: the facts gathered on the host and from the broker
// (doctor_facts.h, doctor_self_test.h) in, one check per thing a person would look at by hand
// out, each ok, warn or FAIL with what was found and, when it is not ok, the fix.
//
//   std::vector<DoctorCheck> checks = DoctorChecks(facts);
//   std::cout << DoctorText(checks);   // "ok    bwrap: /usr/bin/bwrap (bubblewrap 0.8.0)"
//   return DoctorExitCode(checks);     // 1 when any check FAILs
//
// FAIL is kept for what a sandboxed run needs and does not have (bwrap, socat, user namespaces,
// the launcher, create-time filename denies, a self-test that saw its three denials); warn for
// what only narrows it (no resource limits, no microVM runtime: terminals and rigs only).
#ifndef CCSANDBOX_BROKER_DOCTOR_CHECKS_H_
#define CCSANDBOX_BROKER_DOCTOR_CHECKS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

// A program found on PATH: its path ("" when it is not there) and the first line of its
// version output.
struct ToolFacts {
  std::string path;
  std::string version;
};

struct UserNamespaceFacts {
  // The sysctls that gate them, those present: {"user.max_user_namespaces", "15000"}, ...
  std::vector<std::pair<std::string, std::string>> sysctls;
  std::string tried_as;       // "uid 65534": who the child that called unshare() was
  std::string unshare_error;  // "" when unshare(CLONE_NEWUSER) worked
};

struct SeccompFacts {
  std::string kernel;             // uname's release
  std::string notif_sizes;        // "notif 80, resp 24, data 64 bytes"; "" when refused
  std::string notif_sizes_error;  // why SECCOMP_GET_NOTIF_SIZES failed
  std::string listener_missing;   // launcher::SeccompListenerMissing(): "" = installs
};

struct CgroupFacts {
  int version = 0;                       // 2, 1, or 0 when none is mounted
  std::vector<std::string> controllers;  // v2: cgroup.controllers; v1: the mounted hierarchies
};

struct BrokerFacts {
  std::string address;  // unix:PATH
  std::string error;    // "" when Probe answered; else why not (naming the socket)
  v1::ProbeResponse probe;
  std::string sessions_error;  // "" when ListSessions answered
  std::vector<v1::SandboxHandle> sessions;
};

// The live self-test (doctor_self_test.h): what it attempted and what the event stream said.
struct SelfTestFacts {
  std::string error;  // "" when the command ran to its exit; else why it did not
  std::string workdir;
  std::string protected_file;  // a protectedPaths file it tried to overwrite
  std::string env_file;        // the .env it tried to create
  std::string denied_target;   // host:port it asked the proxy for, not on the allowlist
  std::vector<v1::SandboxViolation> violations;
  bool control_write_landed = false;  // its write to an ordinary file of the work tree worked
  bool protected_unchanged = false;   // the protected file still holds what it held
  bool env_absent = false;            // no .env was made
  int stop_signal = 0;  // the Ctrl-C / SIGTERM / SIGHUP that cancelled it (sandboxctl: 128+N)
};

struct DoctorFacts {
  ToolFacts bwrap, socat;
  UserNamespaceFacts userns;
  int landlock_abi = 0;  // 0: none
  std::string landlock_error;
  SeccompFacts seccomp;
  CgroupFacts cgroups;
  BrokerFacts broker;
  std::optional<SelfTestFacts> self_test;  // unset when it could not be attempted
};

enum class CheckStatus { kOk, kWarn, kFail };

struct DoctorCheck {
  std::string name;  // "bwrap", "user namespaces", "self-test: denied write", ...
  CheckStatus status = CheckStatus::kOk;
  std::string detail;  // what was found
  std::string fix;     // what to do ("" when ok)
};

// Every check, in the order a person would go through them: the broker and its probe, the
// host's tools and kernel features, the launcher, the sessions, the self-test.
std::vector<DoctorCheck> DoctorChecks(const DoctorFacts& facts);

// "ok", "warn", "FAIL".
std::string StatusWord(CheckStatus status);

// One line per check: "FAIL  bwrap: not found on PATH; fix: sudo apt-get install bubblewrap".
std::string DoctorText(const std::vector<DoctorCheck>& checks);

// One JSON object: {"ok":false,"checks":[{"name":..,"status":"fail","detail":..,"fix":..}]}
// (status "ok", "warn" or "fail").
std::string DoctorJson(const std::vector<DoctorCheck>& checks);

// 1 when any check FAILs, else 0.
int DoctorExitCode(const std::vector<DoctorCheck>& checks);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_DOCTOR_CHECKS_H_
