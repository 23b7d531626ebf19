// The curated egress lists (spec: kBaselineAllowedDomains, kGithubDomains,
// kBaselineDeniedDomains), each entry with the reason it is there. Syntax of an entry:
// policy/egress_pattern.h. Entries without a port allow 80 and 443 only.
#ifndef CCSANDBOX_POLICY_EGRESS_LISTS_H_
#define CCSANDBOX_POLICY_EGRESS_LISTS_H_

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ccsandbox::policy {

struct EgressListEntry {
  absl::string_view pattern;
  absl::string_view reason;
};

// Allowed for every session with the network on: LLM API providers, git hosting, package
// registries, the model index.
absl::Span<const EgressListEntry> BaselineAllowedDomains();

// GitHub, added for every session with the network on.
absl::Span<const EgressListEntry> GithubDomains();

// Refused on every port for every session, whatever the allowlist says: cloud metadata
// endpoints (names and addresses) and telemetry destinations. A deny-list address is also
// refused when a listed name resolves to it.
absl::Span<const EgressListEntry> BaselineDeniedDestinations();

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_EGRESS_LISTS_H_
