// One entry of an egress allowlist or deny list, parsed once and matched many times. Pure.
//
//   example.com               that name only
//   *.example.com             any name below example.com at any depth (a.b.example.com), never
//                             example.com itself
//   bedrock.*.amazonaws.com   exactly one label where the '*' stands
//                             (bedrock.us-east-1.amazonaws.com, not bedrock.a.b.amazonaws.com)
//   203.0.113.7, 2001:db8::1, [2001:db8::1]
//                             that address only (IP literals never match a wildcard)
//   any of these + ":port"    that port only; IPv6 then needs brackets: [2001:db8::1]:8443
//
// Ports: an entry without a port allows 80 and 443 (http, https, and git/ssh via
// ssh.github.com:443); any other port must be named, e.g. "github.com:22" or
// "allowed.test:8080". An allowed name is otherwise a way out to every service on that host
// (databases, admin ports), so the default is the two ports a web client needs.
//
// Rejected as INVALID_ARGUMENT: more than one '*'; a '*' that is not a whole label ("a*b.com",
// "**.x.com"); a trailing '*' ("example.*"); fewer than two fixed labels after the '*' ("*.com",
// "a.*.com" would span every domain under a top-level domain); empty labels; a numeric last
// label beside a '*'; raw non-ASCII (write IDNs in punycode); a bad or zero port; surrounding
// spaces. Matching is case-insensitive and ignores one trailing dot, as NormalizeEgressHost.
#ifndef CCSANDBOX_POLICY_EGRESS_PATTERN_H_
#define CCSANDBOX_POLICY_EGRESS_PATTERN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/egress/address.h"
#include "policy/egress/host.h"

namespace ccsandbox::policy {

// Ports an entry without ":port" allows.
inline constexpr uint16_t kDefaultEgressPorts[] = {80, 443};

class EgressPattern {
 public:
  enum class Kind {
    kExactName,     // example.com
    kAnySubdomain,  // *.example.com
    kOneLabel,      // bedrock.*.amazonaws.com
    kAddress,       // 203.0.113.7 / 2001:db8::1
  };

  // Parses one entry; the error message says what is wrong (the caller adds which entry).
  static absl::StatusOr<EgressPattern> Parse(absl::string_view entry);

  // True when `host` (from NormalizeEgressHost) is covered, whatever the port.
  bool MatchesHost(const EgressHost& host) const;
  // True when the entry allows `port` (its own port, or the default ports).
  bool AllowsPort(uint16_t port) const;

  Kind kind() const { return kind_; }
  std::optional<uint16_t> port() const { return port_; }
  // Canonical spelling: lowercase, no trailing dot, IPv6 bracketed when a port follows.
  const std::string& text() const { return text_; }

 private:
  EgressPattern() = default;
  // Parse's host step: a name or an IP literal (port_ already set), or a name with `stars`
  // '*' labels.
  absl::Status SetFixedHost(absl::string_view host_part);
  absl::Status SetWildcardHost(absl::string_view host_part, size_t stars);

  Kind kind_ = Kind::kExactName;
  std::string prefix_;  // kOneLabel: "bedrock."; kExactName: the whole name
  std::string suffix_;  // kAnySubdomain / kOneLabel: ".amazonaws.com"
  std::optional<IpAddress> address_;
  std::optional<uint16_t> port_;
  std::string text_;
};

}  // namespace ccsandbox::policy

#endif  // CCSANDBOX_POLICY_EGRESS_PATTERN_H_
