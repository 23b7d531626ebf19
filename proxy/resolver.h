// Name resolution for the egress proxies, behind a small interface: DNS (SystemResolver), a
// hosts file an operator gives the broker (proxy/hosts_file_resolver.h), or a table in unit
// tests that answers names like allowed.test with 127.0.0.1 (proxy/static_resolver.h).
//
//   SystemResolver resolver;  // getaddrinfo on a small pool, never on the loop thread
//   resolver.Resolve("api.github.com", loop.executor(),
//                    [](absl::StatusOr<Resolver::Addresses> addresses) { ... });
//
// The proxies ask only for names the policy already allowed (a query for a refused name would
// itself carry data out to that name's DNS server), and connect only to the addresses they
// got back and checked: one resolution per connection, never a second one.
#ifndef CCSANDBOX_PROXY_RESOLVER_H_
#define CCSANDBOX_PROXY_RESOLVER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "asio/any_io_executor.hpp"
#include "asio/ip/address.hpp"
#include "asio/thread_pool.hpp"

namespace ccsandbox::proxy {

class Resolver {
 public:
  using Addresses = std::vector<asio::ip::address>;
  using Callback = std::function<void(absl::StatusOr<Addresses>)>;

  virtual ~Resolver() = default;

  // Resolves `host` (a normalised DNS name, never an IP literal) and calls `done` exactly once
  // through `executor`: NOT_FOUND / UNAVAILABLE when it has no addresses.
  virtual void Resolve(const std::string& host, asio::any_io_executor executor, Callback done) = 0;
};

// getaddrinfo(3) on `threads` worker threads, so a slow DNS server delays only the lookups
// queued behind it, never the event loop. Names with a dot are looked up as absolute names
// first (no search-domain expansion). Destroy it before the EventLoop it posts to: the
// destructor waits for lookups in flight.
class SystemResolver : public Resolver {
 public:
  explicit SystemResolver(size_t threads = 4);
  ~SystemResolver() override;

  void Resolve(const std::string& host, asio::any_io_executor executor, Callback done) override;

 private:
  asio::thread_pool pool_;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_RESOLVER_H_
