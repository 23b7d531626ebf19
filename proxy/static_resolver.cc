#include "proxy/static_resolver.h"

#include <chrono>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asio/post.hpp"
#include "asio/steady_timer.hpp"

namespace ccsandbox::proxy {

void StaticResolver::Add(const std::string& host, const std::vector<std::string>& addresses,
                         absl::Duration delay) {
  Entry entry;
  for (const std::string& text : addresses) entry.addresses.push_back(asio::ip::make_address(text));
  entry.delay = delay;
  absl::MutexLock lock(&mu_);
  entries_[host] = std::move(entry);
}

void StaticResolver::Resolve(const std::string& host, asio::any_io_executor executor,
                             Callback done) {
  absl::StatusOr<Addresses> result = absl::NotFoundError(absl::StrCat("unknown test host ", host));
  absl::Duration delay;
  {
    absl::MutexLock lock(&mu_);
    ++lookups_[host];
    auto it = entries_.find(host);
    if (it != entries_.end()) {
      result = it->second.addresses;
      delay = it->second.delay;
    }
  }
  if (delay <= absl::ZeroDuration()) {
    asio::post(executor, [done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
    return;
  }
  auto timer = std::make_shared<asio::steady_timer>(executor, absl::ToChronoNanoseconds(delay));
  timer->async_wait([timer, done = std::move(done), result = std::move(result)](
                        const std::error_code&) mutable { done(std::move(result)); });
}

int StaticResolver::lookups(const std::string& host) const {
  absl::MutexLock lock(&mu_);
  auto it = lookups_.find(host);
  return it == lookups_.end() ? 0 : it->second;
}

int StaticResolver::total_lookups() const {
  absl::MutexLock lock(&mu_);
  int total = 0;
  for (const auto& [host, count] : lookups_) total += count;
  return total;
}

}  // namespace ccsandbox::proxy
