// A Resolver for unit tests: answers from a table (allowed.test -> 127.0.0.1), NOT_FOUND for
// any other name, optionally after a delay, and counts lookups so a test can prove a refused
// name was never resolved. testonly; the broker's --egress-hosts-file is HostsFileResolver
// (proxy/hosts_file_resolver.h).
#ifndef CCSANDBOX_PROXY_STATIC_RESOLVER_H_
#define CCSANDBOX_PROXY_STATIC_RESOLVER_H_

#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proxy/resolver.h"

namespace ccsandbox::proxy {

class StaticResolver : public Resolver {
 public:
  // Answers `host` with `addresses` (text, e.g. "127.0.0.1", "::1") after `delay`.
  void Add(const std::string& host, const std::vector<std::string>& addresses,
           absl::Duration delay = absl::ZeroDuration());

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
