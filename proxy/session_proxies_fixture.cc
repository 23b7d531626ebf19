#include "proxy/session_proxies_fixture.h"

#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "policy/egress/allowlist.h"
#include "tests/poll_until.h"

namespace ccsandbox::proxy::testing {

std::unique_ptr<SessionProxies> SessionProxiesTest::Start(
    std::vector<std::string> entries, bool network_enabled, ProxyTimeouts timeouts,
    Violations* violations, std::optional<ProxyCredentials> credentials, size_t max_connections) {
  absl::StatusOr<policy::EgressAllowlist> list =
      policy::EgressAllowlist::Resolve(network_enabled, entries);
  EXPECT_TRUE(list.ok()) << list.status();
  SessionProxiesOptions options;
  options.session_id = "test-session";
  options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
  options.resolver = resolver_;
  options.on_violation = (violations ? violations : &violations_)->callback();
  options.timeouts = timeouts;
  options.credentials = std::move(credentials);
  options.max_connections = max_connections;
  absl::StatusOr<std::unique_ptr<SessionProxies>> proxies =
      SessionProxies::Start(loop_, std::move(options));
  EXPECT_TRUE(proxies.ok()) << proxies.status();
  return *std::move(proxies);
}

std::unique_ptr<SessionProxies> SessionProxiesTest::StartWith(
    std::vector<std::string> entries, const std::function<void(SessionProxiesOptions&)>& adjust,
    Violations* violations) {
  absl::StatusOr<policy::EgressAllowlist> list = policy::EgressAllowlist::Resolve(true, entries);
  EXPECT_TRUE(list.ok()) << list.status();
  SessionProxiesOptions options;
  options.session_id = "test-session";
  options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
  options.resolver = resolver_;
  options.on_violation = (violations ? violations : &violations_)->callback();
  adjust(options);
  absl::StatusOr<std::unique_ptr<SessionProxies>> proxies =
      SessionProxies::Start(loop_, std::move(options));
  EXPECT_TRUE(proxies.ok()) << proxies.status();
  return *std::move(proxies);
}

::testing::AssertionResult SessionProxiesTest::AwaitOpen(SessionProxies& proxies, size_t count) {
  return ccsandbox::testing::PollUntil([&] { return proxies.open_connections() == count; },
                                       absl::Seconds(10), absl::StrCat(count, " open connections"));
}

}  // namespace ccsandbox::proxy::testing
