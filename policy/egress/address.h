// IP addresses for the egress policy: strict literal parsing, one canonical text form, and the
// address classes the DNS-rebinding guard refuses. Pure: no sockets, no resolution.
//
//   std::optional<IpAddress> ip = ParseIpLiteral("::ffff:127.0.0.1");  // -> 127.0.0.1 (v4)
//   ClassifyAddress(*ip) == AddressClass::kLoopback;
#ifndef CCSANDBOX_POLICY_EGRESS_ADDRESS_H_
#define CCSANDBOX_POLICY_EGRESS_ADDRESS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace ccsandbox::policy {

// An IPv4 or IPv6 address. IPv4-mapped IPv6 (::ffff:a.b.c.d) is always stored as IPv4, so
// one destination has one spelling.
struct IpAddress {
  enum class Family { kV4, kV6 };
  Family family = Family::kV4;
  std::array<uint8_t, 16> bytes{};  // IPv4 uses the first 4

  static IpAddress V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d);
  static IpAddress V6(const std::array<uint8_t, 16>& bytes);  // maps ::ffff:0:0/96 to V4

  bool is_v4() const { return family == Family::kV4; }
  // "127.0.0.1" or RFC 5952 "fd00:ec2::254" (no brackets).
  std::string ToString() const;

  friend bool operator==(const IpAddress& a, const IpAddress& b) {
    return a.family == b.family && a.bytes == b.bytes;
  }
};

// Parses an address literal: IPv4 only as four decimal octets without leading zeros (inet_aton
// also reads "0x7f.1", "2130706433" and "0177.0.0.1" as addresses); IPv6 as inet_pton, with or
// without [brackets], never with a %zone. nullopt for anything else.
std::optional<IpAddress> ParseIpLiteral(absl::string_view text);

// What the rebinding guard needs to know about an address. Addresses embedded in IPv6
// (NAT64 64:ff9b::/96, 6to4 2002::/16) are classified by their IPv4 part.
enum class AddressClass {
  kPublic,
  kUnspecified,  // 0.0.0.0/8, ::
  kLoopback,     // 127/8, ::1
  kPrivate,      // 10/8, 172.16/12, 192.168/16
  kSharedCgnat,  // 100.64/10
  kLinkLocal,    // 169.254/16, fe80::/10
  kUniqueLocal,  // fc00::/7, fec0::/10 (site-local)
  kMulticast,    // 224/4, ff00::/8
  kReserved,     // 240/4 incl. broadcast, 192.0.0/24, documentation, benchmarking, ::/96, Teredo
};

AddressClass ClassifyAddress(const IpAddress& address);

// The IPv4 destination inside a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address.
std::optional<IpAddress> EmbeddedIpv4(const IpAddress& address);

// "loopback", "private (RFC 1918)", ... for refusal reasons.
absl::string_view AddressClassName(AddressClass address_class);

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_EGRESS_ADDRESS_H_
