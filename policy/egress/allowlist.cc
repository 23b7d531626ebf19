#include "policy/egress/allowlist.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "policy/egress/lists.h"

namespace ccsandbox::policy {
namespace {

absl::Status EntryError(size_t index, absl::string_view entry, const absl::Status& status) {
  return absl::InvalidArgumentError(absl::StrFormat("egressAllowlist[%d]: \"%s\": %s; %s", index,
                                                    SanitizeForReason(entry), status.message(),
                                                    "fix or remove the entry"));
}

}  // namespace

absl::Status ValidateEgressAllowlistEntries(absl::Span<const absl::string_view> entries) {
  for (size_t i = 0; i < entries.size(); ++i) {
    absl::StatusOr<EgressPattern> pattern = EgressPattern::Parse(entries[i]);
    if (!pattern.ok()) return EntryError(i, entries[i], pattern.status());
  }
  return absl::OkStatus();
}

absl::StatusOr<EgressAllowlist> EgressAllowlist::ResolveEntries(
    bool network_enabled, absl::Span<const absl::string_view> spec_entries) {
  // Parsed once per process: the curated lists are constants and covered by tests.
  static const std::vector<DenyRule>* const kDeny = [] {
    auto* rules = new std::vector<DenyRule>();
    for (const EgressListEntry& entry : BaselineDeniedDestinations()) {
      rules->push_back({*EgressPattern::Parse(entry.pattern), entry.reason});
    }
    return rules;
  }();
  static const std::vector<Rule>* const kCurated = [] {
    auto* rules = new std::vector<Rule>();
    for (const EgressListEntry& entry : BaselineAllowedDomains()) {
      rules->push_back({*EgressPattern::Parse(entry.pattern), Source::kBaseline});
    }
    for (const EgressListEntry& entry : GithubDomains()) {
      rules->push_back({*EgressPattern::Parse(entry.pattern), Source::kGithub});
    }
    return rules;
  }();

  EgressAllowlist list;
  list.network_enabled_ = network_enabled;
  list.deny_ = kDeny;
  std::vector<Rule> spec_rules;
  for (size_t i = 0; i < spec_entries.size(); ++i) {
    absl::StatusOr<EgressPattern> pattern = EgressPattern::Parse(spec_entries[i]);
    if (!pattern.ok()) return EntryError(i, spec_entries[i], pattern.status());
    spec_rules.push_back({*std::move(pattern), Source::kSpec});
  }
  if (network_enabled) {
    list.allow_ = *kCurated;
    for (Rule& rule : spec_rules) list.allow_.push_back(std::move(rule));
  }
  return list;
}

EgressDecision EgressAllowlist::CheckHost(absl::string_view raw_host, uint16_t port) const {
  EgressDecision decision;
  absl::StatusOr<EgressHost> host = NormalizeEgressHost(raw_host);
  if (!host.ok()) {
    decision.target = absl::StrCat(SanitizeForReason(raw_host), ":", port);
    decision.reason = absl::StrCat("invalid host: ", host.status().message());
    return decision;
  }
  decision.target = FormatHostPort(*host, port);
  if (!network_enabled_) {
    decision.reason = "network is disabled for this session (networkEnabled=false)";
    decision.host = *std::move(host);
    return decision;
  }
  for (const DenyRule& deny : *deny_) {
    if (deny.pattern.MatchesHost(*host)) {
      decision.reason = absl::StrCat("permanently denied destination (", deny.reason,
                                     "), deny-list entry ", deny.pattern.text());
      decision.host = *std::move(host);
      return decision;
    }
  }
  bool host_matched = false;
  for (const Rule& rule : allow_) {
    if (!rule.pattern.MatchesHost(*host)) continue;
    host_matched = true;
    if (!rule.pattern.AllowsPort(port)) continue;
    const bool exact =
        rule.source == Source::kSpec && (rule.pattern.kind() == EgressPattern::Kind::kExactName ||
                                         rule.pattern.kind() == EgressPattern::Kind::kAddress);
    if (!decision.allowed || exact) {
      decision.allowed = true;
      decision.reason = absl::StrCat("allowed by ", rule.pattern.text());
      decision.exact_spec_entry = exact;
    }
    if (exact) break;
  }
  if (!decision.allowed) {
    if (host_matched) {
      decision.reason = absl::StrFormat(
          "port %d is not allowed for %s (entries without a port allow 80 and 443; "
          "add \"%s\" to egressAllowlist)",
          port, host->name, decision.target);
    } else if (host->is_ip()) {
      decision.reason = absl::StrCat("IP address ", host->name,
                                     " is not in the egress allowlist (IP literals must be "
                                     "listed exactly)");
    } else {
      decision.reason =
          absl::StrCat("host ", host->name, " is not in the session's egress allowlist");
    }
  }
  decision.host = *std::move(host);
  return decision;
}

absl::Status EgressAllowlist::CheckAddress(const EgressDecision& decision,
                                           const IpAddress& address) const {
  if (!decision.allowed || !decision.host.has_value()) {
    return absl::PermissionDeniedError(decision.reason);
  }
  const EgressHost as_host{address.ToString(), address};
  std::optional<IpAddress> embedded = EmbeddedIpv4(address);
  const EgressHost embedded_host{embedded ? embedded->ToString() : "", embedded};
  for (const DenyRule& deny : *deny_) {
    if (deny.pattern.kind() != EgressPattern::Kind::kAddress) continue;
    if (deny.pattern.MatchesHost(as_host) ||
        (embedded.has_value() && deny.pattern.MatchesHost(embedded_host))) {
      return absl::PermissionDeniedError(
          absl::StrCat(decision.host->name, " resolves to ", as_host.name,
                       ", a permanently denied address (", deny.reason, ")"));
    }
  }
  const AddressClass address_class = ClassifyAddress(address);
  if (address_class != AddressClass::kPublic && !decision.exact_spec_entry) {
    return absl::PermissionDeniedError(
        absl::StrCat(decision.host->name, " resolves to ", AddressClassName(address_class),
                     " address ", as_host.name,
                     " (DNS-rebinding guard; list the exact name in egressAllowlist to allow it)"));
  }
  return absl::OkStatus();
}

std::vector<std::string> EgressAllowlist::AllowEntries() const {
  std::vector<std::string> out;
  out.reserve(allow_.size());
  for (const Rule& rule : allow_) out.push_back(rule.pattern.text());
  return out;
}

}  // namespace ccsandbox::policy
