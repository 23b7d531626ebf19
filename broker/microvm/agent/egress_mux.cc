#include "broker/microvm/agent/egress_mux.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "policy/plan/egress_ports.h"

namespace ccsandbox::broker::microvm {
namespace {

constexpr auto kHostRetry = std::chrono::milliseconds(50);

}  // namespace

std::vector<EgressMuxListen> SandboxEgressListens() {
  return {{policy::kSandboxLoopback, policy::kSandboxHttpPort, EgressListener::kHttp},
          {policy::kSandboxLoopback, policy::kSandboxSocksPort, EgressListener::kSocks}};
}

bool BringUpLoopback(std::string* error) {
  UniqueFd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq request{};
  strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  if (!fd.valid() || ioctl(fd.get(), SIOCGIFFLAGS, &request) != 0) {
    *error = std::string("lo: ") + strerror(errno);
    return false;
  }
  request.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(fd.get(), SIOCSIFFLAGS, &request) != 0) {
    *error = std::string("lo up: ") + strerror(errno);
    return false;
  }
  return true;
}

std::unique_ptr<EgressMux> EgressMux::Create(UniqueFd channel,
                                             const std::vector<EgressMuxListen>& listens,
                                             std::string* error) {
  auto mux = std::unique_ptr<EgressMux>(new EgressMux(std::move(channel)));
  for (const EgressMuxListen& wanted : listens) {
    UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    const int one = 1;
    sockaddr_in address{.sin_family = AF_INET, .sin_port = htons(wanted.port)};
    const std::string where = wanted.address + ":" + std::to_string(wanted.port);
    if (inet_pton(AF_INET, wanted.address.c_str(), &address.sin_addr) != 1) {
      *error = "not an IPv4 address: " + wanted.address;
      return nullptr;
    }
    if (!fd.valid() || setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        listen(fd.get(), SOMAXCONN) != 0) {
      *error = "cannot listen on " + where + ": " + strerror(errno);
      return nullptr;
    }
    mux->listening_.push_back({std::move(fd), wanted.listener});
  }
  return mux;
}

std::vector<uint16_t> EgressMux::ports() const {
  std::vector<uint16_t> ports;
  for (const Listening& listening : listening_) {
    sockaddr_in address{};
    socklen_t size = sizeof(address);
    getsockname(listening.fd.get(), reinterpret_cast<sockaddr*>(&address), &size);
    ports.push_back(ntohs(address.sin_port));
  }
  return ports;
}

int EgressMux::TimeoutMs() const {
  if (!host_away_) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      retry_at_ - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count()) + 1;
}

void EgressMux::Fill(std::vector<pollfd>* fds) {
  if (host_away_ && std::chrono::steady_clock::now() >= retry_at_) {
    host_away_ = false;
    endpoint_.Reopen();
  }
  for (const Listening& listening : listening_) fds->push_back({listening.fd.get(), POLLIN, 0});
  endpoint_.Fill(fds, !host_away_);
}

void EgressMux::Handle(const pollfd* fds, size_t count) {
  const size_t listeners = std::min(count, listening_.size());
  for (size_t i = 0; i < listeners; ++i) {
    if (fds[i].revents == 0) continue;
    UniqueFd client(
        accept4(listening_[i].fd.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!client.valid()) continue;
    const int one = 1;
    setsockopt(client.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    // Refused (over the cap, or no host): the client sees its connection close.
    if (host_away_) continue;
    endpoint_.Open(std::move(client), listening_[i].listener);
  }
  if (host_away_) return;
  endpoint_.Handle(fds + listeners, count - listeners);
  if (endpoint_.state() == EgressEndpoint::State::kClosed) {
    host_away_ = true;
    retry_at_ = std::chrono::steady_clock::now() + kHostRetry;
  } else if (endpoint_.state() == EgressEndpoint::State::kBroken && !reported_) {
    reported_ = true;
    fprintf(stderr, "ccsandbox-agent: egress ends: %s\n", endpoint_.error().c_str());
  }
}

}  // namespace ccsandbox::broker::microvm
