// How both daemons log: to stderr (the journal under systemd), one line per event in one shape —
// key=value (logfmt) by default, JSON lines with --log-format=json:
//   ts=2026-12-02T12:05:34.123+00:00 level=info daemon=broker msg="session s1 launched: ..."
//   {"ts":"2026-12-02T12:05:34.123+00:00","level":"info","daemon":"broker","msg":"..."}
// Time is ISO-8601 in UTC with its offset; the message is always quoted and escaped (it carries
// paths and names a sandbox chose: a newline or quote in one must not forge a line or a key);
// colour only when stderr is a terminal and the format is key=value.
#ifndef CCSANDBOX_BASE_DAEMON_LOGGING_H_
#define CCSANDBOX_BASE_DAEMON_LOGGING_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "spdlog/formatter.h"

namespace ccsandbox {

enum class LogFormat { kKeyValue, kJson };

// "text" or "json"; INVALID_ARGUMENT naming the flag otherwise.
absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view flag_value);

// The formatter of one daemon's lines; `daemon` is a fixed word ("broker", "launcher").
std::unique_ptr<spdlog::formatter> DaemonLogFormatter(const std::string& daemon, LogFormat format);

// Replaces spdlog's default logger with stderr lines of DaemonLogFormatter, the format read from
// --log-format. INVALID_ARGUMENT (and lines in the default shape) for a bad --log-format.
absl::Status SetUpDaemonLogging(const std::string& daemon);

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_DAEMON_LOGGING_H_
