// How both daemons log: to stderr (the journal under systemd), every line stamped ISO-8601 in
// UTC with its offset ("2026-12-02T12:05:34.123+00:00 info broker: ..."), colour only when
// stderr is a terminal.
#ifndef CCSANDBOX_BASE_DAEMON_LOGGING_H_
#define CCSANDBOX_BASE_DAEMON_LOGGING_H_

#include <string>

namespace ccsandbox {

// Replaces spdlog's default logger; `daemon` is the word after the level ("broker").
void SetUpDaemonLogging(const std::string& daemon);

}  // namespace ccsandbox

#endif  // CCSANDBOX_BASE_DAEMON_LOGGING_H_
