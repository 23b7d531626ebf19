// A session's egress policy (spec "Network egress"): the curated baseline, the GitHub domains
// and SandboxSpec.egressAllowlist, behind the permanent deny list, plus the DNS-rebinding
// guard for the addresses a name resolves to. Pure: the caller resolves names.
//
//   // At Launch: INVALID_ARGUMENT naming the first bad entry.
//   if (absl::Status valid = ValidateEgressAllowlist(spec.egress_allowlist()); !valid.ok())
//     return valid;
//   const bool network = !spec.has_network_enabled() || spec.network_enabled();
//   absl::StatusOr<EgressAllowlist> list =
//       EgressAllowlist::Resolve(network, spec.egress_allowlist());
//
//   // Per connection: the name first (never resolve a refused name: the query itself leaks
//   // data to the name's DNS server), then each address it resolved to. Connect only to an
//   // address that passed CheckAddress; never resolve the name a second time.
//   EgressDecision d = list->CheckHost("api.github.com", 443);
//   if (d.allowed && list->CheckAddress(d, address).ok()) connect(address);
//
// Order of a decision: a host that does not normalise is refused; networkEnabled=false refuses
// everything; the deny list refuses (on every port, even when an allow entry also matches);
// then an allow entry must match the host and allow the port (policy/egress_pattern.h: 80 and
// 443 unless the entry names its port). An IP literal is allowed only by an entry with that
// exact address. A resolved address is refused when it is on the deny list (always), or when
// it is loopback, private, CGNAT, link-local, unique-local, unspecified, multicast or reserved
// and the host was not allowed by an exact (non-wildcard) SandboxSpec entry: a public name
// that answers with 127.0.0.1 or 10.0.0.5 is a rebinding attack on the host's own services.
#ifndef CCSANDBOX_POLICY_EGRESS_ALLOWLIST_H_
#define CCSANDBOX_POLICY_EGRESS_ALLOWLIST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "policy/egress/address.h"
#include "policy/egress/host.h"
#include "policy/egress/pattern.h"

namespace ccsandbox::policy {

struct EgressDecision {
  bool allowed = false;
  // "host:port" as normalised ("[v6]:port"), or a sanitised copy of what was asked.
  std::string target;
  // Refused: why, one line, for the X-Sandbox-Reason header and the violation's raw field.
  // Allowed: which entry allowed it.
  std::string reason;
  std::optional<EgressHost> host;
  // Allowed by an exact name or address from SandboxSpec.egressAllowlist: the only thing that
  // lifts the rebinding guard.
  bool exact_spec_entry = false;
};

class EgressAllowlist {
 public:
  // Baseline + GitHub + `spec_entries` when `network_enabled`; an empty allowlist otherwise.
  // `spec_entries` is validated either way (any range of string-likes, e.g. the proto field).
  template <typename Entries>
  static absl::StatusOr<EgressAllowlist> Resolve(bool network_enabled,
                                                 const Entries& spec_entries) {
    std::vector<absl::string_view> views(std::begin(spec_entries), std::end(spec_entries));
    return ResolveEntries(network_enabled, views);
  }
  static absl::StatusOr<EgressAllowlist> ResolveEntries(
      bool network_enabled, absl::Span<const absl::string_view> spec_entries);

  // Decides whether a connection to `host` (as the client wrote it) on `port` may proceed.
  EgressDecision CheckHost(absl::string_view host, uint16_t port) const;

  // The rebinding guard: may the proxy connect to `address`, which the allowed `decision`'s host
  // resolved to? PERMISSION_DENIED with the reason otherwise.
  absl::Status CheckAddress(const EgressDecision& decision, const IpAddress& address) const;

  bool network_enabled() const { return network_enabled_; }
  // The allow entries in canonical spelling: baseline, GitHub, then the spec's.
  std::vector<std::string> AllowEntries() const;

 private:
  enum class Source { kBaseline, kGithub, kSpec };
  struct Rule {
    EgressPattern pattern;
    Source source;
  };
  struct DenyRule {
    EgressPattern pattern;
    absl::string_view reason;
  };

  EgressAllowlist() = default;

  bool network_enabled_ = false;
  std::vector<Rule> allow_;
  const std::vector<DenyRule>* deny_ = nullptr;  // the static deny list
};

// Launch-time check of SandboxSpec.egressAllowlist: OK, or INVALID_ARGUMENT naming the first
// bad entry and saying what is wrong with it.
absl::Status ValidateEgressAllowlistEntries(absl::Span<const absl::string_view> entries);

template <typename Entries>
absl::Status ValidateEgressAllowlist(const Entries& entries) {
  std::vector<absl::string_view> views(std::begin(entries), std::end(entries));
  return ValidateEgressAllowlistEntries(views);
}

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_EGRESS_ALLOWLIST_H_
