#include "policy/egress/host.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::policy {
namespace {

constexpr size_t kMaxNameLength = 253;
constexpr size_t kMaxLabelLength = 63;

bool IsLabelChar(char c) {
  return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-' || c == '_';
}

bool IsAllDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

bool IsHexNumber(absl::string_view s) {
  if (!absl::StartsWith(s, "0x")) return false;
  for (char c : s.substr(2)) {
    if (!absl::ascii_isxdigit(c)) return false;
  }
  return true;
}

int PunycodeDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0' + 26;
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return c - 'A';
  return -1;
}

uint32_t PunycodeAdapt(uint32_t delta, uint32_t num_points, bool first) {
  delta = first ? delta / 700 : delta / 2;
  delta += delta / num_points;
  uint32_t k = 0;
  while (delta > ((36 - 1) * 26) / 2) {
    delta /= 36 - 1;
    k += 36;
  }
  return k + (36 * delta) / (delta + 38);
}

}  // namespace

std::optional<std::u32string> DecodePunycode(absl::string_view encoded) {
  constexpr uint32_t kBase = 36, kTMin = 1, kTMax = 26;
  constexpr uint32_t kMax = std::numeric_limits<uint32_t>::max();
  std::u32string out;
  size_t in = 0;
  const size_t delimiter = encoded.rfind('-');
  if (delimiter != absl::string_view::npos && delimiter > 0) {
    for (size_t j = 0; j < delimiter; ++j) {
      if (static_cast<unsigned char>(encoded[j]) >= 0x80) return std::nullopt;
      out.push_back(static_cast<char32_t>(encoded[j]));
    }
    in = delimiter + 1;
  }
  uint32_t n = 128, i = 0, bias = 72;
  while (in < encoded.size()) {
    const uint32_t old_i = i;
    uint32_t w = 1;
    for (uint32_t k = kBase;; k += kBase) {
      if (in >= encoded.size()) return std::nullopt;
      const int digit = PunycodeDigit(encoded[in++]);
      if (digit < 0) return std::nullopt;
      if (static_cast<uint32_t>(digit) > (kMax - i) / w) return std::nullopt;
      i += static_cast<uint32_t>(digit) * w;
      const uint32_t t = k <= bias ? kTMin : (k >= bias + kTMax ? kTMax : k - bias);
      if (static_cast<uint32_t>(digit) < t) break;
      if (w > kMax / (kBase - t)) return std::nullopt;
      w *= kBase - t;
    }
    const uint32_t points = static_cast<uint32_t>(out.size()) + 1;
    bias = PunycodeAdapt(i - old_i, points, old_i == 0);
    if (i / points > kMax - n) return std::nullopt;
    n += i / points;
    i %= points;
    if (n > 0x10FFFF || (n >= 0xD800 && n <= 0xDFFF)) return std::nullopt;
    out.insert(out.begin() + i, static_cast<char32_t>(n));
    ++i;
  }
  return out;
}

absl::Status ValidateDnsLabel(absl::string_view label) {
  if (label.empty()) return absl::InvalidArgumentError("empty label");
  if (label.size() > kMaxLabelLength) {
    return absl::InvalidArgumentError(absl::StrCat("label longer than ", kMaxLabelLength));
  }
  for (char c : label) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      return absl::InvalidArgumentError(
          "non-ASCII name; internationalised names must be written in punycode (xn--) form");
    }
    if (!IsLabelChar(c)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("character '%s' is not allowed in a host name",
                          absl::CHexEscape(absl::string_view(&c, 1))));
    }
  }
  if (label.front() == '-' || label.back() == '-') {
    return absl::InvalidArgumentError("label starts or ends with '-'");
  }
  if (absl::StartsWith(label, "xn--")) {
    std::optional<std::u32string> decoded = DecodePunycode(label.substr(4));
    bool non_ascii = false;
    if (decoded.has_value()) {
      for (char32_t c : *decoded) non_ascii |= c >= 0x80;
    }
    if (!non_ascii) return absl::InvalidArgumentError("invalid punycode label");
  }
  return absl::OkStatus();
}

absl::StatusOr<EgressHost> NormalizeEgressHost(absl::string_view raw) {
  if (raw.empty()) return absl::InvalidArgumentError("empty host");
  if (raw.front() == '[' || raw.find(':') != absl::string_view::npos) {
    std::optional<IpAddress> ip = ParseIpLiteral(raw);
    if (!ip.has_value()) return absl::InvalidArgumentError("invalid IPv6 literal");
    return EgressHost{ip->ToString(), ip};
  }
  std::string name = absl::AsciiStrToLower(raw);
  if (absl::EndsWith(name, ".")) name.pop_back();
  if (name.empty()) return absl::InvalidArgumentError("empty host");
  if (name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrCat("host name longer than ", kMaxNameLength));
  }
  const absl::string_view last_label = absl::string_view(name).substr(name.rfind('.') + 1);
  if (IsAllDigits(last_label) || IsHexNumber(last_label)) {
    std::optional<IpAddress> ip = ParseIpLiteral(name);
    if (!ip.has_value()) {
      return absl::InvalidArgumentError(
          "numeric host that is not a dotted-quad IPv4 address (ambiguous to resolvers)");
    }
    return EgressHost{ip->ToString(), ip};
  }
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    absl::Status status = ValidateDnsLabel(label);
    if (!status.ok()) return status;
  }
  return EgressHost{std::move(name), std::nullopt};
}

std::string FormatHostPort(const EgressHost& host, uint16_t port) {
  if (host.is_ip() && !host.ip->is_v4()) return absl::StrCat("[", host.name, "]:", port);
  return absl::StrCat(host.name, ":", port);
}

std::string SanitizeForReason(absl::string_view raw) {
  constexpr size_t kMax = 255;
  std::string out = absl::CHexEscape(raw.substr(0, kMax));
  if (raw.size() > kMax) out += "...";
  return out;
}

}  // namespace ccsandbox::policy
