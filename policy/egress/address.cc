#include "policy/egress/address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <initializer_list>

#include "absl/strings/ascii.h"

namespace ccsandbox::policy {
namespace {

std::optional<IpAddress> ParseStrictV4(absl::string_view text) {
  std::array<uint8_t, 4> octets{};
  size_t octet = 0;
  size_t i = 0;
  while (true) {
    if (octet == 4 || i >= text.size() || !absl::ascii_isdigit(text[i])) return std::nullopt;
    size_t start = i;
    unsigned value = 0;
    while (i < text.size() && absl::ascii_isdigit(text[i]) && i - start < 3) {
      value = value * 10 + (text[i] - '0');
      ++i;
    }
    const size_t digits = i - start;
    // "010" is octal to inet_aton and decimal to people: refuse both readings.
    if (value > 255 || (digits > 1 && text[start] == '0')) return std::nullopt;
    octets[octet++] = static_cast<uint8_t>(value);
    if (i == text.size()) break;
    if (text[i] != '.') return std::nullopt;
    ++i;
  }
  if (octet != 4) return std::nullopt;
  return IpAddress::V4(octets[0], octets[1], octets[2], octets[3]);
}

bool InV4(const IpAddress& a, uint8_t b0, uint8_t b1, uint8_t b2, int prefix) {
  const uint32_t addr = (uint32_t{a.bytes[0]} << 24) | (uint32_t{a.bytes[1]} << 16) |
                        (uint32_t{a.bytes[2]} << 8) | a.bytes[3];
  const uint32_t net = (uint32_t{b0} << 24) | (uint32_t{b1} << 16) | (uint32_t{b2} << 8);
  const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return (addr & mask) == (net & mask);
}

AddressClass ClassifyV4(const IpAddress& a) {
  if (InV4(a, 0, 0, 0, 8)) return AddressClass::kUnspecified;
  if (InV4(a, 127, 0, 0, 8)) return AddressClass::kLoopback;
  if (InV4(a, 10, 0, 0, 8) || InV4(a, 172, 16, 0, 12) || InV4(a, 192, 168, 0, 16)) {
    return AddressClass::kPrivate;
  }
  if (InV4(a, 100, 64, 0, 10)) return AddressClass::kSharedCgnat;
  if (InV4(a, 169, 254, 0, 16)) return AddressClass::kLinkLocal;
  if (InV4(a, 224, 0, 0, 4)) return AddressClass::kMulticast;
  if (InV4(a, 240, 0, 0, 4) || InV4(a, 192, 0, 0, 24) || InV4(a, 192, 0, 2, 24) ||
      InV4(a, 192, 88, 99, 24) || InV4(a, 198, 18, 0, 15) || InV4(a, 198, 51, 100, 24) ||
      InV4(a, 203, 0, 113, 24)) {
    return AddressClass::kReserved;
  }
  return AddressClass::kPublic;
}

bool HasV6Prefix(const IpAddress& a, std::initializer_list<uint8_t> prefix_bytes, int bits) {
  std::array<uint8_t, 16> net{};
  std::copy(prefix_bytes.begin(), prefix_bytes.end(), net.begin());
  for (int i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((a.bytes[i] & mask) != (net[i] & mask)) return false;
  }
  return true;
}

AddressClass ClassifyV6(const IpAddress& a) {
  static constexpr std::array<uint8_t, 16> kZero{};
  std::array<uint8_t, 16> loopback{};
  loopback[15] = 1;
  if (a.bytes == kZero) return AddressClass::kUnspecified;
  if (a.bytes == loopback) return AddressClass::kLoopback;
  // NAT64 and 6to4 carry an IPv4 destination: 64:ff9b::a9fe:a9fe is 169.254.169.254.
  if (std::optional<IpAddress> v4 = EmbeddedIpv4(a)) return ClassifyV4(*v4);
  if (HasV6Prefix(a, {}, 96) ||                                    // IPv4-compatible (deprecated)
      HasV6Prefix(a, {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48) ||  // local-use NAT64
      HasV6Prefix(a, {0x01, 0x00}, 64) ||                          // discard-only
      HasV6Prefix(a, {0x20, 0x01, 0x0d, 0xb8}, 32) ||              // documentation
      HasV6Prefix(a, {0x20, 0x01, 0x00, 0x00}, 32)) {              // Teredo
    return AddressClass::kReserved;
  }
  if (HasV6Prefix(a, {0xfe, 0x80}, 10)) return AddressClass::kLinkLocal;
  if (HasV6Prefix(a, {0xfe, 0xc0}, 10) || HasV6Prefix(a, {0xfc}, 7)) {
    return AddressClass::kUniqueLocal;
  }
  if (HasV6Prefix(a, {0xff}, 8)) return AddressClass::kMulticast;
  return AddressClass::kPublic;
}

}  // namespace

IpAddress IpAddress::V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  IpAddress ip;
  ip.family = Family::kV4;
  ip.bytes[0] = a;
  ip.bytes[1] = b;
  ip.bytes[2] = c;
  ip.bytes[3] = d;
  return ip;
}

IpAddress IpAddress::V6(const std::array<uint8_t, 16>& bytes) {
  static constexpr std::array<uint8_t, 12> kMappedPrefix = {0, 0, 0, 0, 0,    0,
                                                            0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(kMappedPrefix.begin(), kMappedPrefix.end(), bytes.begin())) {
    return V4(bytes[12], bytes[13], bytes[14], bytes[15]);
  }
  IpAddress ip;
  ip.family = Family::kV6;
  ip.bytes = bytes;
  return ip;
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (is_v4()) {
    inet_ntop(AF_INET, bytes.data(), buf, sizeof(buf));
  } else {
    inet_ntop(AF_INET6, bytes.data(), buf, sizeof(buf));
  }
  return buf;
}

std::optional<IpAddress> ParseIpLiteral(absl::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
    if (text.find(':') == absl::string_view::npos) return std::nullopt;  // "[1.2.3.4]"
  }
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  if (text.find(':') == absl::string_view::npos) return ParseStrictV4(text);
  // A %zone names an interface of this host: never a destination we forward to.
  if (text.find('%') != absl::string_view::npos) return std::nullopt;
  const std::string copy(text);
  std::array<uint8_t, 16> bytes{};
  if (inet_pton(AF_INET6, copy.c_str(), bytes.data()) != 1) return std::nullopt;
  return IpAddress::V6(bytes);
}

std::optional<IpAddress> EmbeddedIpv4(const IpAddress& a) {
  if (a.is_v4()) return std::nullopt;
  if (HasV6Prefix(a, {0x00, 0x64, 0xff, 0x9b}, 96)) {
    return IpAddress::V4(a.bytes[12], a.bytes[13], a.bytes[14], a.bytes[15]);
  }
  if (HasV6Prefix(a, {0x20, 0x02}, 16)) {
    return IpAddress::V4(a.bytes[2], a.bytes[3], a.bytes[4], a.bytes[5]);
  }
  return std::nullopt;
}

AddressClass ClassifyAddress(const IpAddress& address) {
  return address.is_v4() ? ClassifyV4(address) : ClassifyV6(address);
}

absl::string_view AddressClassName(AddressClass address_class) {
  switch (address_class) {
    case AddressClass::kPublic:
      return "public";
    case AddressClass::kUnspecified:
      return "unspecified";
    case AddressClass::kLoopback:
      return "loopback";
    case AddressClass::kPrivate:
      return "private (RFC 1918)";
    case AddressClass::kSharedCgnat:
      return "shared (CGNAT 100.64/10)";
    case AddressClass::kLinkLocal:
      return "link-local";
    case AddressClass::kUniqueLocal:
      return "unique-local";
    case AddressClass::kMulticast:
      return "multicast";
    case AddressClass::kReserved:
      return "reserved";
  }
  return "unknown";
}

}  // namespace ccsandbox::policy
