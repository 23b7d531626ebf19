// Bounds on what a client may send: every oversized, malformed or non-UTF-8 input is refused
// before anything runs, with INVALID_ARGUMENT whose message starts with the field's name
// (proto3 JSON spelling, e.g. "bindMounts[3].hostPath") and quotes at most kMaxQuotedBytes of
// the input. The limits are the kernel's and bubblewrap's where those exist (PATH_MAX, NAME_MAX,
// MAX_ARG_STRLEN, bwrap's 9000 arguments), and otherwise budgets that keep every request well
// inside them and inside one gRPC message. docs/limits.md is the table of what, limit and why.
//
//   if (absl::Status s = CheckSpecLimits(spec); !s.ok()) return s;   // Launch (in ValidateSpec)
//   if (absl::Status s = CheckExecLimits(exec); !s.ok()) return s;   // Exec, before the plan
//   if (absl::Status s = CheckPlanLimits(plan); !s.ok()) return s;   // broker, and ValidatePlan
//   if (absl::Status s = CheckBwrapArgv(argv, envp, arg_max); !s.ok()) return s;  // before exec
//
// Each check is a pure function of one message, runs in time linear in its size, and stops at
// the first problem (checking list lengths before walking the lists).
#ifndef CCSANDBOX_POLICY_PLAN_INPUT_LIMITS_H_
#define CCSANDBOX_POLICY_PLAN_INPUT_LIMITS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/launcher.pb.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

// gRPC: every server and channel of the broker, the launcher and sandboxctl sets this as its
// maximum receive and send message size. A bigger message is refused by gRPC itself with
// RESOURCE_EXHAUSTED ("Received message larger than max") before any handler runs.
inline constexpr int kMaxGrpcMessageBytes = 16 << 20;
// ExecRequest.stdin: well below kMaxGrpcMessageBytes, so that stdin plus the largest argv, env
// and mount lists still fit in the LaunchPlan the broker sends the launcher.
inline constexpr size_t kMaxStdinBytes = 4 << 20;

// SandboxSpec lists. bwrap spends 3 arguments per mount (4 with the create guard) and up to 4
// per deny path out of its 9000; these leave room for kMaxArgvEntries and the deny sets.
inline constexpr int kMaxBindMounts = 256;
inline constexpr int kMaxProtectedPaths = 256;
inline constexpr int kMaxRunnerStateDirs = 64;
inline constexpr int kMaxExecGrantRoots = 64;
inline constexpr int kMaxEgressAllowlistEntries = 256;
// A DNS name (253) plus brackets and ":65535".
inline constexpr size_t kMaxEgressEntryBytes = 261;
inline constexpr int kMaxWriteDenyPatterns = 64;
// denyWriteNames (each rule is matched against every creation in a writable mount) and
// connectableSockets (each one more bwrap mount at most).
inline constexpr int kMaxDenyWriteNames = 64;
inline constexpr int kMaxConnectableSockets = 64;
// Ids (sessionId, workspaceId, agentId) and mode.
inline constexpr size_t kMaxIdBytes = 128;
inline constexpr size_t kMaxModeBytes = 32;

// Paths: PATH_MAX (4096) counts the terminating NUL; NAME_MAX is per component.
inline constexpr size_t kMaxPathBytes = 4095;
inline constexpr size_t kMaxPathComponentBytes = 255;

// ExecRequest. MAX_ARG_STRLEN (32 pages = 131072) counts the NUL and bounds each argv entry and
// each NAME=value; execve fails with E2BIG past ARG_MAX (2 MiB with the default 8 MiB stack) for
// everything together, which for bwrap also holds the mounts and deny paths: the command's own
// argv + env get half of it. argv[0] is a program name or path.
inline constexpr int kMaxArgvEntries = 4096;
inline constexpr int kMaxEnvEntries = 1024;
inline constexpr size_t kMaxArgBytes = 131071;
inline constexpr size_t kMaxArgvEnvBytes = 1 << 20;
inline constexpr uint64_t kMaxTimeoutMs = uint64_t{7} * 24 * 3600 * 1000;  // 7 days

// bubblewrap dies with "Exceeded maximum number of arguments 9000" when it is given more than
// this many arguments after its own name, the command's included (bubblewrap.c, MAX_ARGS).
inline constexpr int kBwrapMaxArgs = 9000;

// Error messages quote at most this many bytes of any input, then "…".
inline constexpr size_t kMaxQuotedBytes = 200;

// `input` in single quotes for an error message: cut after kMaxQuotedBytes (at a character
// boundary, then "…"), invalid UTF-8 and control characters written as \xNN.
std::string QuoteInput(absl::string_view input);
// The same without the quotes, for text that ends a message (a Kill's reason, a parser's
// message that quotes its input).
std::string CutInput(absl::string_view input);

// The SandboxSpec of a Launch: list lengths, id and mode lengths, every path's length,
// component length, NUL bytes and UTF-8, the egressAllowlist and writeDenyPatterns entries.
absl::Status CheckSpecLimits(const v1::SandboxSpec& spec);

// An ExecRequest: sessionId, argv (1..kMaxArgvEntries entries, no NUL, each at most
// kMaxArgBytes, argv[0] at most kMaxPathBytes), env (names non-empty without '=' or NUL, no NUL
// in values), argv + env bytes, guestWorkdir, stdin size and the timeout's range.
absl::Status CheckExecLimits(const v1::ExecRequest& request);

// A LaunchPlan, on both sides of the broker → launcher hop: the same bounds on argv, env, stdin,
// timeout, workdir and mounts (kMaxBindMounts + kMaxRunnerStateDirs), the deny paths as
// CheckHostPaths, the egress sockets, the create guard's patterns, and the whole plan within
// kMaxGrpcMessageBytes.
absl::Status CheckPlanLimits(const v1::LaunchPlan& plan);

// Paths the broker found on the host (the deny sets): each must be valid UTF-8 to travel in a
// LaunchPlan, and at most kMaxPathBytes. FAILED_PRECONDITION naming `field`[i] and the path.
absl::Status CheckHostPaths(absl::string_view field, const std::vector<std::string>& paths);

// The rendered bwrap command line, right before execve: at most kBwrapMaxArgs arguments after
// argv[0], and argv + envp (strings, NULs and pointers) within `arg_max` (sysconf(_SC_ARG_MAX)).
// INVALID_ARGUMENT saying how many there are and what they are made of, instead of bwrap's
// "Exceeded maximum number of arguments" or execve's E2BIG.
absl::Status CheckBwrapArgv(const std::vector<std::string>& argv,
                            const std::vector<std::string>& envp, size_t arg_max);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_INPUT_LIMITS_H_
