// A session's push gateway (gateway/push_gateway.h), started with its egress: it listens on
// push.sock in the session's runtime directory (the launcher binds it in and the shim bridges
// 127.0.0.1:3130 to it), serves the spec's push.repositories under its push.rules, and reports
// every refused push as a violation. Its write credentials are minted per push; the session's
// credentials are revoked when it stops.
//
//   absl::StatusOr<std::unique_ptr<gateway::PushGateway>> gw =
//       StartSessionPush(spec, session_dir, credentials, on_violation, plan);
#ifndef CCSANDBOX_BROKER_SESSION_PUSH_H_
#define CCSANDBOX_BROKER_SESSION_PUSH_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gateway/credentials.h"
#include "gateway/push_gateway.h"
#include "proto/launcher.pb.h"
#include "proto/sandbox.pb.h"

namespace ccsandbox::broker {

// Starts the gateway for `spec.push` (checked again: policy/plan/push_spec.h) and fills the
// plan's push socket and repositories.
// FAILED_PRECONDITION when the broker has no credential broker (--push-credentials).
absl::StatusOr<std::unique_ptr<gateway::PushGateway>> StartSessionPush(
    const v1::SandboxSpec& spec, const std::string& session_dir,
    gateway::CredentialBroker* credentials,
    std::function<void(const v1::SandboxViolation&)> on_violation, v1::EgressPlan& plan,
    std::function<std::string(const std::string&)> upstream_address = nullptr);

}  // namespace ccsandbox::broker

#endif  // CCSANDBOX_BROKER_SESSION_PUSH_H_
