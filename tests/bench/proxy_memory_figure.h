// proxy_bench figure 4, the memory of this process (the proxies; the upstream is a separate
// process); prints and asserts nothing:
//   - per idle session: RSS after starting `idle_sessions` more sessions (after one
//     start/stop, so one-time costs are not charged per session);
//   - per open tunnel: RSS, the proxy's descriptors and the kernel's TCP buffer pages with
//     `tunnels` CONNECT tunnels to `session` open and idle (after 50 warm-up tunnels).
#ifndef CCSANDBOX_TESTS_BENCH_PROXY_MEMORY_FIGURE_H_
#define CCSANDBOX_TESTS_BENCH_PROXY_MEMORY_FIGURE_H_

#include <memory>

#include "proxy/event_loop.h"
#include "proxy/resolver.h"
#include "proxy/session_proxies.h"
#include "tests/bench/proxy_bench_client.h"

namespace ccsandbox::bench {

void FigureProxyMemory(proxy::EventLoop& loop, std::shared_ptr<proxy::Resolver> resolver,
                       const Target& t, proxy::SessionProxies& session, int idle_sessions,
                       int tunnels);

}  // namespace ccsandbox::bench

#endif  // CCSANDBOX_TESTS_BENCH_PROXY_MEMORY_FIGURE_H_
