// An egress name resolver that answers from a hosts(5)-style file and nothing else, for
// machines where the egress proxies must not (or cannot) ask DNS: an air-gapped host whose few
// allowed upstreams have fixed addresses, a lab network, or end-to-end tests that reach local
// servers by name. The broker uses it when started with --egress-hosts-file=FILE; every name
// the file does not list then fails to resolve, and the proxies refuse the connection.
//
//   absl::StatusOr<std::unique_ptr<HostsFileResolver>> resolver =
//       HostsFileResolver::Load("/etc/ccsandbox/egress-hosts");
//   if (!resolver.ok()) return resolver.status();  // names the file and every bad line
//
// The file: one "ADDRESS NAME [NAME...]" entry per line, '#' starts a comment, blank lines are
// skipped. ADDRESS is an IPv4 or IPv6 literal; each NAME a DNS name, normalised as the proxies
// normalise the names they are asked for (lowercase, one trailing dot dropped), so a name
// matches however a client spells it. A name on several lines gets every address. The rules
// the proxies apply after resolution still hold: an address the DNS-rebinding guard refuses
// (loopback, private, metadata…) is reached only when the spec lists that exact name.
//
// Loading fails closed: a file over kMaxHostsFileBytes, not a regular file, or with any bad
// line is refused as a whole (INVALID_ARGUMENT listing each bad line by number), so the broker
// refuses to start rather than serve a half-read table.
#ifndef CCSANDBOX_PROXY_HOSTS_FILE_RESOLVER_H_
#define CCSANDBOX_PROXY_HOSTS_FILE_RESOLVER_H_

#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proxy/resolver.h"

namespace ccsandbox::proxy {

// Larger than any hand-kept hosts file; bounds what a mistaken path (a log, a device) costs.
inline constexpr size_t kMaxHostsFileBytes = 1 << 20;

// Normalised name → its addresses, in file order.
using HostsTable = std::map<std::string, Resolver::Addresses>;

// Parses the text of a hosts file; `origin` names it in errors ("FILE:LINE: ..."). At most
// kMaxReportedHostsLines bad lines are quoted, then how many more there were.
inline constexpr int kMaxReportedHostsLines = 10;
absl::StatusOr<HostsTable> ParseHostsFile(absl::string_view text, absl::string_view origin);

class HostsFileResolver : public Resolver {
 public:
  // Reads and parses `path` (see above).
  static absl::StatusOr<std::unique_ptr<HostsFileResolver>> Load(const std::string& path);

  HostsFileResolver(HostsTable table, std::string origin);

  // The file's addresses for `host`, or NOT_FOUND naming the file.
  void Resolve(const std::string& host, asio::any_io_executor executor, Callback done) override;

  // How many names the file lists.
  size_t size() const { return table_.size(); }
  // The file's first address for `host` (as the proxies normalise it), or "" — for callers that
  // must reach the same names the proxies do (the push gateway's upstream).
  std::string FirstAddress(const std::string& host) const;

 private:
  const HostsTable table_;  // never changes after construction: no lock
  const std::string origin_;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_HOSTS_FILE_RESOLVER_H_
