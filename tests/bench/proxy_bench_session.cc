#include "tests/bench/proxy_bench_session.h"

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asio/post.hpp"
#include "policy/egress/allowlist.h"
#include "tests/bench/proxy_bench_client.h"

namespace ccsandbox::bench {

void BenchResolver::Resolve(const std::string& host, asio::any_io_executor executor,
                            Callback done) {
  absl::StatusOr<Addresses> result =
      host == kBenchHost ? absl::StatusOr<Addresses>(Addresses{asio::ip::address_v4::loopback()})
                         : absl::NotFoundError(host);
  asio::post(executor, [done = std::move(done), result = std::move(result)]() mutable {
    done(std::move(result));
  });
}

std::unique_ptr<proxy::SessionProxies> StartBenchSession(proxy::EventLoop& loop,
                                                         std::shared_ptr<proxy::Resolver> resolver,
                                                         uint16_t upstream_port, int index,
                                                         UniqueFd http_listen_fd,
                                                         UniqueFd socks_listen_fd) {
  auto list = policy::EgressAllowlist::Resolve(
      true, std::vector<std::string>{absl::StrCat(kBenchHost, ":", upstream_port)});
  proxy::SessionProxiesOptions options;
  options.session_id = absl::StrCat("bench-", index);
  options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
  options.resolver = std::move(resolver);
  options.max_connections = 1 << 20;
  options.http_listen_fd = std::move(http_listen_fd);
  options.socks_listen_fd = std::move(socks_listen_fd);
  auto proxies = proxy::SessionProxies::Start(loop, std::move(options));
  if (!proxies.ok()) {
    std::fprintf(stderr, "start: %s\n", std::string(proxies.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(proxies);
}

}  // namespace ccsandbox::bench
