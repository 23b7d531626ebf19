// macOS denial telemetry (spec: "Denials on macOS are observable"): one line of
// `log stream --style ndjson --predicate 'sender == "Sandbox"'` (Apple's ndjson: one JSON object a
// line, keys timestamp, processID, processImagePath, subsystem, category, eventMessage,
// messageType, ...) becomes a SeatbeltDenial when its eventMessage is a Sandbox denial:
//
//   Sandbox: bash(1234) deny(1) file-write-create /private/tmp/x/.env
//   Sandbox: curl(77) deny(1) network-outbound 1.2.3.4:443
//
// The prefix "Sandbox: " is optional (sandboxd's own lines omit it); the process name may hold
// spaces and parentheses ("Google Chrome Helper (GPU)(81)"). `action` is Seatbelt's word as
// logged (file-read-data, file-write-create, file-write-unlink, network-outbound, process-exec,
// mach-lookup, ...): lower-case letters, digits, '-' and a trailing '*', at most 64 bytes.
// `target` is the rest of the message (a path, host:port, or a service name; empty when none),
// at most kMaxSeatbeltTargetBytes. `raw` is the whole line. The pid is the DENIED process's, from
// the message: the JSON's processID is the logger's (the kernel: 0). Pure: text in, events out.
//
// Hostile input (the sandboxed command chooses the paths it is denied on, hence part of each
// line): malformed JSON, lines that are not denials, over-long lines (> kMaxSeatbeltLogLineBytes)
// and unknown shapes give nullopt, never a crash; invalid UTF-8 becomes U+FFFD before parsing.
#ifndef CCSANDBOX_POLICY_VIOLATIONS_SEATBELT_LOG_H_
#define CCSANDBOX_POLICY_VIOLATIONS_SEATBELT_LOG_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::policy {

// Longest log line read; a longer one is ignored whole (cut JSON is not JSON anyway).
inline constexpr size_t kMaxSeatbeltLogLineBytes = 16384;
inline constexpr size_t kMaxSeatbeltActionBytes = 64;
inline constexpr size_t kMaxSeatbeltTargetBytes = 4096;

struct SeatbeltDenial {
  v1::SandboxViolation violation;
  int64_t pid = 0;      // the denied process
  std::string process;  // its name as logged, e.g. "bash"
};

// The denial one ndjson line reports, or nullopt. A trailing "\n" or "\r\n" is ignored.
std::optional<SeatbeltDenial> ParseSeatbeltLogLine(absl::string_view line);

// The denial an eventMessage reports ("Sandbox: NAME(PID) deny(N) ACTION[ TARGET]"), or nullopt.
// `raw` is left unset.
std::optional<SeatbeltDenial> ParseSeatbeltDenialMessage(absl::string_view message);

// True for denials every Mac logs whatever the sandbox (see kSeatbeltNoise in seatbelt_log.cc):
// reporting them would bury the denials a run caused.
bool IsSeatbeltNoise(const v1::SandboxViolation& violation);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_VIOLATIONS_SEATBELT_LOG_H_
