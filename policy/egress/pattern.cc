#include "policy/egress/pattern.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::policy {
namespace {

absl::StatusOr<uint16_t> ParsePort(absl::string_view text) {
  if (text.empty() || text.size() > 5 || text[0] == '0') {
    return absl::InvalidArgumentError("port must be a number from 1 to 65535");
  }
  uint32_t port = 0;
  for (char c : text) {
    if (!absl::ascii_isdigit(c)) {
      return absl::InvalidArgumentError("port must be a number from 1 to 65535");
    }
    port = port * 10 + (c - '0');
  }
  if (port > 65535) return absl::InvalidArgumentError("port must be a number from 1 to 65535");
  return static_cast<uint16_t>(port);
}

bool LooksNumeric(absl::string_view label) {
  if (absl::StartsWith(label, "0x")) return true;
  for (char c : label) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

absl::Status CheckEntryCharacters(absl::string_view entry) {
  if (entry.empty()) return absl::InvalidArgumentError("empty entry");
  for (char c : entry) {
    if (absl::ascii_isspace(c) || absl::ascii_iscntrl(c)) {
      return absl::InvalidArgumentError("whitespace or control character in entry");
    }
  }
  return absl::OkStatus();
}

// An entry split into its host ("[v6]" keeps its brackets) and its port, if it names one. A
// host with more than one ':' and no brackets is an IPv6 literal without a port.
struct EntryParts {
  absl::string_view host;
  std::optional<uint16_t> port;
};

absl::StatusOr<EntryParts> SplitPort(absl::string_view entry) {
  EntryParts parts{entry, std::nullopt};
  absl::string_view port_text;
  if (entry.front() == '[') {
    const size_t close = entry.find(']');
    if (close == absl::string_view::npos) return absl::InvalidArgumentError("missing ']'");
    parts.host = entry.substr(0, close + 1);
    const absl::string_view rest = entry.substr(close + 1);
    if (rest.empty()) return parts;
    if (rest.front() != ':') return absl::InvalidArgumentError("expected ':port' after ']'");
    port_text = rest.substr(1);
  } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
    const size_t colon = entry.find(':');
    parts.host = entry.substr(0, colon);
    port_text = entry.substr(colon + 1);
  } else {
    return parts;
  }
  absl::StatusOr<uint16_t> port = ParsePort(port_text);
  if (!port.ok()) return port.status();
  parts.port = *port;
  return parts;
}

// Checks the labels of a name with one '*' by the rules in the header; returns the index of
// the '*' label.
absl::StatusOr<size_t> CheckWildcardLabels(const std::vector<absl::string_view>& labels) {
  size_t star = labels.size();
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == "*") {
      star = i;
    } else if (absl::StrContains(labels[i], '*')) {
      return absl::InvalidArgumentError("'*' must be a whole label, as in *.example.com");
    }
  }
  if (star == labels.size() - 1) {
    return absl::InvalidArgumentError("'*' as the last label (any top-level domain)");
  }
  if (labels.size() - star - 1 < 2) {
    return absl::InvalidArgumentError(
        "a '*' needs at least two fixed labels after it (*.example.com, a.*.example.com)");
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i == star) continue;
    if (absl::Status status = ValidateDnsLabel(labels[i]); !status.ok()) return status;
  }
  if (LooksNumeric(labels.back())) {
    return absl::InvalidArgumentError("a wildcard never matches an IP address");
  }
  return star;
}

}  // namespace

absl::StatusOr<EgressPattern> EgressPattern::Parse(absl::string_view entry) {
  if (absl::Status characters = CheckEntryCharacters(entry); !characters.ok()) return characters;
  absl::StatusOr<EntryParts> parts = SplitPort(entry);
  if (!parts.ok()) return parts.status();
  EgressPattern pattern;
  pattern.port_ = parts->port;
  const size_t stars = std::count(parts->host.begin(), parts->host.end(), '*');
  absl::Status host =
      stars == 0 ? pattern.SetFixedHost(parts->host) : pattern.SetWildcardHost(parts->host, stars);
  if (!host.ok()) return host;
  if (pattern.port_.has_value()) absl::StrAppend(&pattern.text_, ":", *pattern.port_);
  return pattern;
}

absl::Status EgressPattern::SetFixedHost(absl::string_view host_part) {
  absl::StatusOr<EgressHost> host = NormalizeEgressHost(host_part);
  if (!host.ok()) return host.status();
  if (host->is_ip()) {
    kind_ = Kind::kAddress;
    address_ = host->ip;
  } else {
    kind_ = Kind::kExactName;
    prefix_ = host->name;
  }
  const bool bracket = host->is_ip() && !host->ip->is_v4() && port_.has_value();
  text_ = bracket ? absl::StrCat("[", host->name, "]") : host->name;
  return absl::OkStatus();
}

absl::Status EgressPattern::SetWildcardHost(absl::string_view host_part, size_t stars) {
  if (stars > 1) return absl::InvalidArgumentError("more than one '*' (exactly one allowed)");
  std::string name = absl::AsciiStrToLower(host_part);
  if (absl::EndsWith(name, ".")) name.pop_back();
  std::vector<absl::string_view> labels = absl::StrSplit(name, '.');
  absl::StatusOr<size_t> star = CheckWildcardLabels(labels);
  if (!star.ok()) return star.status();
  const std::vector<absl::string_view> before(labels.begin(), labels.begin() + *star);
  const std::vector<absl::string_view> after(labels.begin() + *star + 1, labels.end());
  suffix_ = absl::StrCat(".", absl::StrJoin(after, "."));
  if (*star == 0) {
    kind_ = Kind::kAnySubdomain;
  } else {
    kind_ = Kind::kOneLabel;
    prefix_ = absl::StrCat(absl::StrJoin(before, "."), ".");
  }
  text_ = name;
  if (text_.size() > 253) return absl::InvalidArgumentError("host name too long");
  return absl::OkStatus();
}

bool EgressPattern::MatchesHost(const EgressHost& host) const {
  if (kind_ == Kind::kAddress) return host.is_ip() && *host.ip == *address_;
  if (host.is_ip()) return false;
  const std::string& name = host.name;
  switch (kind_) {
    case Kind::kExactName:
      return name == prefix_;
    case Kind::kAnySubdomain:
      // The suffix starts with '.', so at least one whole label stands before it.
      return name.size() > suffix_.size() && absl::EndsWith(name, suffix_);
    case Kind::kOneLabel: {
      if (name.size() <= prefix_.size() + suffix_.size()) return false;
      if (!absl::StartsWith(name, prefix_) || !absl::EndsWith(name, suffix_)) return false;
      const absl::string_view middle = absl::string_view(name).substr(
          prefix_.size(), name.size() - prefix_.size() - suffix_.size());
      return !absl::StrContains(middle, '.');
    }
    case Kind::kAddress:
      break;
  }
  return false;
}

bool EgressPattern::AllowsPort(uint16_t port) const {
  if (port_.has_value()) return port == *port_;
  for (uint16_t allowed : kDefaultEgressPorts) {
    if (port == allowed) return true;
  }
  return false;
}

}  // namespace ccsandbox::policy
