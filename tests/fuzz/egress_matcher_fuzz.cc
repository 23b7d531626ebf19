// libFuzzer target: allowlist entries, host normalisation and matching. Input: an entry, a
// newline, a host, and two bytes of port. Invariants: never crash; normalising is idempotent;
// an entry's canonical text parses to the same entry and matches the same hosts; a leading
// wildcard never matches its apex; an exact entry matches exactly its own name; a decision
// from a one-entry allowlist agrees with the matcher, and the deny list always wins.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "policy/egress/allowlist.h"
#include "policy/egress/pattern.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ccsandbox::policy;
  std::string input(reinterpret_cast<const char*>(data), size);
  uint16_t port = 443;
  if (input.size() >= 2) {
    port = static_cast<uint16_t>((static_cast<uint8_t>(input[input.size() - 2]) << 8) |
                                 static_cast<uint8_t>(input.back()));
    input.resize(input.size() - 2);
  }
  const size_t newline = input.find('\n');
  const std::string entry = input.substr(0, newline);
  const std::string raw_host = newline == std::string::npos ? entry : input.substr(newline + 1);

  absl::StatusOr<EgressHost> host = NormalizeEgressHost(raw_host);
  if (host.ok()) {
    absl::StatusOr<EgressHost> again = NormalizeEgressHost(host->name);
    FUZZ_CHECK(again.ok() && again->name == host->name && again->is_ip() == host->is_ip());
    if (!host->is_ip()) {
      for (char c : host->name) FUZZ_CHECK(static_cast<unsigned char>(c) < 0x80 && c != '*');
    }
  }

  absl::StatusOr<EgressPattern> pattern = EgressPattern::Parse(entry);
  if (!pattern.ok()) {
    FUZZ_CHECK(pattern.status().code() == absl::StatusCode::kInvalidArgument);
    FUZZ_CHECK(!EgressAllowlist::ResolveEntries(true, {entry}).ok());
    return 0;
  }
  absl::StatusOr<EgressPattern> reparsed = EgressPattern::Parse(pattern->text());
  FUZZ_CHECK(reparsed.ok() && reparsed->text() == pattern->text() &&
             reparsed->kind() == pattern->kind() && reparsed->port() == pattern->port());
  if (!host.ok()) return 0;

  const bool matches = pattern->MatchesHost(*host);
  FUZZ_CHECK(reparsed->MatchesHost(*host) == matches);
  std::string text = pattern->text();  // the entry without its ":port"
  if (pattern->port()) text = text.substr(0, text.rfind(':'));
  switch (pattern->kind()) {
    case EgressPattern::Kind::kExactName:
      FUZZ_CHECK(matches == (!host->is_ip() && host->name == text));
      break;
    case EgressPattern::Kind::kAnySubdomain: {
      const std::string apex = text.substr(2);
      absl::StatusOr<EgressHost> apex_host = NormalizeEgressHost(apex);
      FUZZ_CHECK(apex_host.ok() && !pattern->MatchesHost(*apex_host));
      if (matches) FUZZ_CHECK(absl::EndsWith(host->name, "." + apex));
      break;
    }
    case EgressPattern::Kind::kOneLabel:
      if (matches) FUZZ_CHECK(!host->is_ip());
      break;
    case EgressPattern::Kind::kAddress:
      FUZZ_CHECK(matches == (host->is_ip() && host->name == ParseIpLiteral(text)->ToString()));
      break;
  }

  absl::StatusOr<EgressAllowlist> list = EgressAllowlist::ResolveEntries(true, {entry});
  FUZZ_CHECK(list.ok());
  const EgressDecision decision = list->CheckHost(raw_host, port);
  if (decision.allowed) FUZZ_CHECK(decision.host.has_value());
  if (matches && pattern->AllowsPort(port) &&
      decision.reason.find("permanently") == std::string::npos) {
    FUZZ_CHECK(decision.allowed);
  }
  absl::StatusOr<EgressAllowlist> off = EgressAllowlist::ResolveEntries(false, {entry});
  FUZZ_CHECK(off.ok() && !off->CheckHost(raw_host, port).allowed);
  // The deny list wins whatever the entry says.
  FUZZ_CHECK(!list->CheckHost("metadata.google.internal", port).allowed);
  FUZZ_CHECK(!list->CheckHost("169.254.169.254", port).allowed);
  return 0;
}
