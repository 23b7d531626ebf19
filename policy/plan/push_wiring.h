// How a native sandbox's pushes reach its session's push gateway: the gateway's Unix socket is
// bound in at a fixed path, the shim bridges a fixed loopback port to it, and the run's git
// configuration — in the environment (GIT_CONFIG_COUNT/KEY_n/VALUE_n), set after the caller's
// GIT_CONFIG_* were scrubbed — rewrites push URLs to it with `url.<gateway>.pushInsteadOf`:
// each of the session's repositories in its spellings, and every GitHub push
// (`https://github.com/`, `git@github.com:`, `ssh://git@github.com/`), so a push to a repository
// the session does not have reaches the gateway too and is refused there with a reason. Fetches
// keep their URLs; for the session's repositories `credential.<url>.helper` is the shim's git
// credential mode, which asks the gateway for a read credential.
//
// The configuration only routes: what enforces the rule is that the run holds no credential
// that can push (docs/push-gateway.md).
#ifndef CCSANDBOX_POLICY_PLAN_PUSH_WIRING_H_
#define CCSANDBOX_POLICY_PLAN_PUSH_WIRING_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

inline constexpr char kSandboxPushSocket[] = "/run/ccsandbox/push.sock";
inline constexpr uint16_t kSandboxPushPort = 3130;
inline constexpr size_t kMaxPushRepositories = 64;

// Where the gateway serves an upstream: "/<host>/<path>" ("https://github.com/o/r.git" ->
// "/github.com/o/r.git"). INVALID_ARGUMENT for what is not an http(s) URL with a host and a
// path, or holds credentials, a query, a fragment, whitespace, control bytes or "..".
absl::StatusOr<std::string> GatewayPathFor(absl::string_view upstream_url);

// Checks the spec's push.repositories (count, each URL, no duplicates), naming the field.
absl::Status ValidatePushRepositories(const std::vector<std::string>& repositories);

// The git configuration of a run whose session has a gateway at 127.0.0.1:kSandboxPushPort.
std::map<std::string, std::string> PushEnvironment(const std::vector<std::string>& repositories);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_PUSH_WIRING_H_
