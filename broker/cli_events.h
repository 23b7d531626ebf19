// How sandboxctl renders a run's event stream and which exit code it ends with.
#ifndef CCSANDBOX_BROKER_CLI_EVENTS_H_
#define CCSANDBOX_BROKER_CLI_EVENTS_H_

#include <optional>
#include <string>

#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

// The exit code a terminal event implies: exit -> its code; killed -> 128 + signal
// (SIGKILL when unknown); error -> 125. nullopt for non-terminal events.
std::optional<int> ExitCodeFor(const v1::SandboxEvent& event);

// Text for the user's stderr, or "" when the event prints nothing there:
// "sandbox: violation <action> <target>", "sandbox: killed (<reason>)", "sandbox: <error>".
std::string StderrNoticeFor(const v1::SandboxEvent& event);

// One line of proto3 JSON.
std::string EventJson(const v1::SandboxEvent& event);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_CLI_EVENTS_H_
