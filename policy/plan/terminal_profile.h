// The spec's fixed terminal profile ("Server-hosted terminal") as a launch plan: a native
// terminal's $HOME and working directory writable, the network open, the secret set under
// $HOME unreadable; a none terminal is the host shell with nothing around it. No read-only
// token, push gateway, egress allowlist or create guard: those are dispatch concerns.
#ifndef CCSANDBOX_POLICY_PLAN_TERMINAL_PROFILE_H_
#define CCSANDBOX_POLICY_PLAN_TERMINAL_PROFILE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/plan/deny_sets.h"
#include "proto/launcher.pb.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

// The secrets a native terminal cannot read: every secret name and home-relative secret
// path (deny_sets.h, the one list) under `home`. Spelled as written; the caller adds the
// resolved spellings (ResolveDenyPaths).
std::vector<std::string> TerminalSecretPaths(const std::string& home);

struct TerminalInputs {
  v1::SandboxBackend backend = v1::SANDBOX_BACKEND_NONE;  // NONE or NATIVE
  std::string run_id;
  std::string session_id;
  std::string home;     // the broker user's home: absolute, normalised
  std::string workdir;  // absolute, normalised
  std::vector<std::string> argv;
  std::string term;
  std::map<std::string, std::string> base_env;  // DefaultEnvironment(backend, host env)
  // Native: the deny sets of the scan over TerminalMounts (secrets hidden, trusted names
  // read-only), every path in both spellings, and what each bind named when it was checked.
  DenyPaths deny;
  std::optional<v1::CreateGuardPlan> create_guard;  // native: the trusted-name rules
  std::vector<std::string> forbidden_dirs;          // the broker's control plane
  // What home and workdir named when they were checked (the scan's own bind_ids win).
  std::map<std::string, FileIdentity> bind_ids;
};

// What a native terminal binds writable (home and workdir resolved): $HOME, and the working
// directory unless it lies in $HOME; only the working directory when it holds $HOME.
std::vector<std::string> TerminalMounts(const std::string& home, const std::string& workdir);

// Rows and cols each 1..1000.
bool ValidTerminalSize(const v1::TerminalSize& size);
// The signals a terminal user sends (TerminalInput.signal): INT, QUIT, TERM, HUP, KILL, TSTP,
// CONT, WINCH.
bool IsTerminalSignal(int sig);
// The same two rules as INVALID_ARGUMENT errors saying what was wrong.
absl::Status CheckTerminalSize(unsigned rows, unsigned cols);
absl::Status CheckTerminalSignal(int sig);

// The open request, checked (INVALID_ARGUMENT naming the field): a working directory that is
// "" or absolute and normalised (its existence is the caller's to check), an argv whose
// program is named (searched in PATH when it has no '/'), a TERM of 0..64 printable
// characters without spaces, a size of 1..1000 each way.
absl::Status CheckTerminalOpen(const v1::TerminalOpen& open);

// The terminal's plan. Native: $HOME bound writable, the working directory too unless it lies
// in $HOME, the secrets hidden, the host's network; HOME=$HOME, TERM, SHELL=argv[0].
absl::StatusOr<v1::LaunchPlan> BuildTerminalPlan(const TerminalInputs& inputs);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_TERMINAL_PROFILE_H_
