#include "broker/cli_events.h"

#include <signal.h>

#include "absl/strings/str_cat.h"
#include "broker/cli_json.h"

namespace ccsandbox::broker {

std::optional<int> ExitCodeFor(const v1::SandboxEvent& event) {
  if (event.has_exit()) return event.exit().exit_code();
  if (event.has_killed())
    return 128 + (event.killed().signal() > 0 ? event.killed().signal() : SIGKILL);
  if (event.has_error()) return 125;
  return std::nullopt;
}

std::string StderrNoticeFor(const v1::SandboxEvent& event) {
  if (event.has_violation()) {
    const v1::SandboxViolation& v = event.violation();
    // A folded retry storm (macOS) says how many denials it stands for.
    return absl::StrCat("sandbox: violation ", v.action(), " ", v.target(),
                        v.count() > 1 ? absl::StrCat(" (", v.count(), " times)") : "", "\n");
  }
  if (event.has_killed()) {
    const v1::SandboxEvent::Killed& killed = event.killed();
    return absl::StrCat("sandbox: killed (", killed.reason(), killed.detail().empty() ? "" : ": ",
                        killed.detail(), ")\n");
  }
  if (event.has_error()) return absl::StrCat("sandbox: ", event.error().message(), "\n");
  return "";
}

std::string EventJson(const v1::SandboxEvent& event) { return JsonLine(event); }

}  // namespace ccsandbox::broker
