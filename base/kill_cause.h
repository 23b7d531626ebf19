// Why the host killed a run: the `killed` event's reason, one word of a fixed vocabulary a
// client can switch on, and a detail in words for people.
//
//   KillCause cause{kKilledTimeout, "timeout after 500 ms"};
//   KillCause given = KillCauseFrom(request.reason(), request.detail());  // unknown → stopped
#ifndef CCSANDBOX_BASE_KILL_CAUSE_H_
#define CCSANDBOX_BASE_KILL_CAUSE_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ccsandbox {

inline constexpr absl::string_view kKilledOom = "oom";          // the memory limit
inline constexpr absl::string_view kKilledPids = "pids";        // the process limit
inline constexpr absl::string_view kKilledTimeout = "timeout";  // the run's timeout
// Kill, Destroy, a cancelled or vanished client: someone asked for the run to end.
inline constexpr absl::string_view kKilledStopped = "stopped";
// The launcher stopped or its connection was lost while the run was going.
inline constexpr absl::string_view kKilledLauncherRestart = "launcher-restart";
// The session's sandbox ended under a warm Exec (its init or bwrap died).
inline constexpr absl::string_view kKilledSandboxEnded = "sandbox-ended";

struct KillCause {
  std::string reason;  // one of the kKilled* words
  std::string detail;  // what happened, in words
};

inline bool IsKillReason(absl::string_view reason) {
  for (absl::string_view known : {kKilledOom, kKilledPids, kKilledTimeout, kKilledStopped,
                                  kKilledLauncherRestart, kKilledSandboxEnded}) {
    if (reason == known) return true;
  }
  return false;
}

// A cause from a caller's words: a reason outside the vocabulary is "stopped", and its text
// goes into the detail.
inline KillCause KillCauseFrom(absl::string_view reason, absl::string_view detail) {
  if (IsKillReason(reason)) return {std::string(reason), std::string(detail)};
  const absl::string_view sep = reason.empty() || detail.empty() ? "" : ": ";
  return {std::string(kKilledStopped), absl::StrCat(reason, sep, detail)};
}

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_KILL_CAUSE_H_
