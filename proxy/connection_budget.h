// The egress proxies' connections across every session on one EventLoop. Each session has its
// own cap (SessionProxiesOptions::max_connections); the budget caps their sum, so that many
// sessions, each below its own cap, still cannot take every descriptor the broker needs for
// Launch, its gRPC streams and the other sessions.
//
//   auto budget = std::make_shared<ConnectionBudget>(DefaultConnectionBudget(fd_limit));
//   options.budget = budget;   // the same one for every session's proxies
//
// A session below SessionProxiesOptions::guaranteed_connections is served even when the budget
// is spent (open() may then exceed limit()), so the sessions that spent it cannot cut off a
// light one. Used on the loop thread only (SessionState counts through it): nothing here locks.
#ifndef CCSANDBOX_PROXY_CONNECTION_BUDGET_H_
#define CCSANDBOX_PROXY_CONNECTION_BUDGET_H_

#include <cstddef>

namespace ccsandbox::proxy {

class ConnectionBudget {
 public:
  explicit ConnectionBudget(size_t limit) : limit_(limit) {}

  size_t limit() const { return limit_; }
  size_t open() const { return open_; }
  bool full() const { return open_ >= limit_; }
  void Add() { ++open_; }
  void Remove() { --open_; }

 private:
  const size_t limit_;
  size_t open_ = 0;
};

// Descriptors one proxied connection can hold: the client's socket, the upstream's, and a
// splice pipe (two descriptors) for each bulk direction.
inline constexpr size_t kDescriptorsPerConnection = 6;

// The total for a process whose open-file limit is `fd_limit`: a quarter of the limit (at least
// 1024 descriptors) stays for everything that is not a proxied connection, the rest is shared,
// at kDescriptorsPerConnection each. At least 64.
inline size_t DefaultConnectionBudget(size_t fd_limit) {
  const size_t reserve = fd_limit / 4 > 1024 ? fd_limit / 4 : 1024;
  const size_t shared = fd_limit > reserve ? fd_limit - reserve : 0;
  const size_t connections = shared / kDescriptorsPerConnection;
  return connections > 64 ? connections : 64;
}

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_CONNECTION_BUDGET_H_
