// A destination host as the egress policy compares it: a normalised ASCII DNS name or a canonical
// IP literal. Pure.
//
//   absl::StatusOr<EgressHost> host = NormalizeEgressHost("API.GitHub.com.");  // "api.github.com"
//   FormatHostPort(*host, 443) == "api.github.com:443";
//
// Internationalised names are compared in their ASCII (punycode, "xn--") form only: a raw
// non-ASCII name is refused rather than converted, because converting needs IDNA mapping tables
// (case folding, NFC) whose versions differ between the client, the resolver and us, and two
// readings of one name are how an allowlist gets bypassed. Every "xn--" label must be valid
// punycode that decodes to a non-ASCII label.
#ifndef CCSANDBOX_POLICY_EGRESS_HOST_H_
#define CCSANDBOX_POLICY_EGRESS_HOST_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/egress/address.h"

namespace ccsandbox::policy {

struct EgressHost {
  std::string name;             // lowercase, no trailing dot; an IP literal's canonical text
  std::optional<IpAddress> ip;  // set when the host is an IP literal

  bool is_ip() const { return ip.has_value(); }
};

// Normalises a host taken from a request (CONNECT authority, absolute URI, SOCKS5 address):
// ASCII lowercase, one trailing dot dropped, IP literals (IPv6 with or without brackets) in
// canonical form. INVALID_ARGUMENT, with the reason, for: an empty or over-long (> 253) name,
// empty or over-long (> 63) labels, characters outside [a-z0-9_-], a label that starts or ends
// with '-', raw non-ASCII, an invalid "xn--" label, and a numeric name that is not a strict
// dotted quad ("0x7f.1", "2130706433": inet_aton would read those as addresses).
absl::StatusOr<EgressHost> NormalizeEgressHost(absl::string_view raw);

// Checks one lowercase DNS label by the rules above.
absl::Status ValidateDnsLabel(absl::string_view label);

// RFC 3492: decodes the part of an "xn--" label after the prefix into Unicode code points;
// nullopt when it is not valid punycode.
std::optional<std::u32string> DecodePunycode(absl::string_view encoded);

// "name:port", or "[v6]:port" for an IPv6 literal.
std::string FormatHostPort(const EgressHost& host, uint16_t port);

// Printable, bounded rendering of untrusted host bytes for refusal reasons and logs.
std::string SanitizeForReason(absl::string_view raw);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_EGRESS_HOST_H_
