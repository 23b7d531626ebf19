// A Resolver for tests: answers from a table (allowed.test -> 127.0.0.1), NOT_FOUND for any
// other name, optionally after a delay, and counts lookups so a test can prove a refused name
// was never resolved. The broker uses it only under its test flag --egress-hosts-file, so
// end-to-end tests reach local upstreams by name and never a real outside address.
#ifndef CCSANDBOX_PROXY_STATIC_RESOLVER_H_
#define CCSANDBOX_PROXY_STATIC_RESOLVER_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proxy/resolver.h"

namespace ccsandbox::proxy {

class StaticResolver : public Resolver {
 public:
  // Answers `host` with `addresses` (text, e.g. "127.0.0.1", "::1") after `delay`.
  void Add(const std::string& host, const std::vector<std::string>& addresses,
           absl::Duration delay = absl::ZeroDuration());

  // Adds every "ADDRESS NAME [NAME...]" line of a hosts(5)-style file (# comments). Names are
  // taken in lower case. INVALID_ARGUMENT naming the line for a bad address.
  absl::Status AddHostsFile(const std::string& path);

  void Resolve(const std::string& host, asio::any_io_executor executor, Callback done) override;

  int lookups(const std::string& host) const;
  int total_lookups() const;

 private:
  struct Entry {
    Addresses addresses;
    absl::Duration delay;
  };
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> lookups_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_STATIC_RESOLVER_H_
