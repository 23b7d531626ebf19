// proxy_bench's sessions: SessionProxies started in this process on the bench's EventLoop,
// exactly as the broker starts them, allowing only bench.test:PORT, with a resolver that answers
// bench.test -> 127.0.0.1 and no other name. Bench-only.
//
//   std::unique_ptr<proxy::SessionProxies> session =
//       StartBenchSession(loop, resolver, upstream_port, /*index=*/0);
//   ... session->http_port(), session->socks_port() ...
//   session->Stop();
#ifndef CCSANDBOX_TESTS_BENCH_PROXY_BENCH_SESSION_H_
#define CCSANDBOX_TESTS_BENCH_PROXY_BENCH_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "base/unique_fd.h"
#include "proxy/event_loop.h"
#include "proxy/resolver.h"
#include "proxy/session_proxies.h"

namespace ccsandbox::bench {

// bench.test -> 127.0.0.1; NOT_FOUND for every other name.
class BenchResolver : public proxy::Resolver {
 public:
  void Resolve(const std::string& host, asio::any_io_executor executor, Callback done) override;
};

// Session "bench-<index>" on `loop`; its proxies listen on the given Unix sockets, or on
// ephemeral 127.0.0.1 ports when they are invalid. Exits the bench when it cannot start.
std::unique_ptr<proxy::SessionProxies> StartBenchSession(proxy::EventLoop& loop,
                                                         std::shared_ptr<proxy::Resolver> resolver,
                                                         uint16_t upstream_port, int index,
                                                         UniqueFd http_listen_fd = UniqueFd(),
                                                         UniqueFd socks_listen_fd = UniqueFd());

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_PROXY_BENCH_SESSION_H_
