// Environment scrubbing (spec: "Brokered credentials and a scrubbed environment"): variables
// that inject code into the dynamic linker, a shell or an interpreter never reach a
// sandboxed or unsandboxed command. Applied by the launcher on every backend, none included.
#ifndef CCSANDBOX_POLICY_PLAN_ENV_SCRUB_H_
#define CCSANDBOX_POLICY_PLAN_ENV_SCRUB_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

// True when `name` is an injection vector that must be removed.
bool IsScrubbedEnvName(absl::string_view name);

// Removes every scrubbed variable (and any name that is empty or contains '=' or NUL) from
// `env`; returns the removed names, sorted.
std::vector<std::string> ScrubEnvironment(std::map<std::string, std::string>& env);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_PLAN_ENV_SCRUB_H_
