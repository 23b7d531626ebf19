#include "proxy/resolver.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "asio/post.hpp"

namespace ccsandbox::proxy {
namespace {

absl::StatusOr<Resolver::Addresses> GetAddrInfo(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  // A dotted name is looked up as absolute first ("api.github.com."): with the resolver's
  // search list (ndots) "api.github.com" could otherwise become "api.github.com.corp.example",
  // a name the policy never checked. Only a name that does not exist that way (an /etc/hosts
  // entry, a search-list name) gets the usual lookup; the rebinding guard still checks it.
  addrinfo* raw = nullptr;
  int rc = EAI_NONAME;
  if (host.find('.') != std::string::npos) {
    rc = getaddrinfo((host + ".").c_str(), nullptr, &hints, &raw);
  }
  if (rc == EAI_NONAME || rc == EAI_NODATA) {
    rc = getaddrinfo(host.c_str(), nullptr, &hints, &raw);
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(raw, &freeaddrinfo);
  if (rc != 0) {
    const std::string message = absl::StrCat("cannot resolve ", host, ": ", gai_strerror(rc));
    if (rc == EAI_NONAME || rc == EAI_NODATA) return absl::NotFoundError(message);
    return absl::UnavailableError(message);
  }
  Resolver::Addresses addresses;
  for (const addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
    asio::ip::address address;
    if (ai->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(ai->ai_addr);
      asio::ip::address_v4::bytes_type bytes;
      std::memcpy(bytes.data(), &in->sin_addr, 4);
      address = asio::ip::address_v4(bytes);
    } else if (ai->ai_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(ai->ai_addr);
      asio::ip::address_v6::bytes_type bytes;
      std::memcpy(bytes.data(), &in6->sin6_addr, 16);
      address = asio::ip::address_v6(bytes);
    } else {
      continue;
    }
    if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) {
      addresses.push_back(address);
    }
  }
  if (addresses.empty()) return absl::NotFoundError(absl::StrCat("no addresses for ", host));
  return addresses;
}

}  // namespace

SystemResolver::SystemResolver(size_t threads) : pool_(threads) {}

SystemResolver::~SystemResolver() {
  pool_.stop();
  pool_.join();
}

void SystemResolver::Resolve(const std::string& host, asio::any_io_executor executor,
                             Callback done) {
  asio::post(pool_, [host, executor, done = std::move(done)]() mutable {
    absl::StatusOr<Addresses> result = GetAddrInfo(host);
    asio::post(executor, [done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  });
}

}  // namespace ccsandbox::proxy
