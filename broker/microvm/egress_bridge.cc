#include "broker/microvm/egress_bridge.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "broker/microvm/egress_endpoint.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker::microvm {
namespace {

// Never blocks: a proxy whose backlog is full fails this stream, not the bridge's loop.
UniqueFd ConnectProxy(const std::string& path) {
  sockaddr_un address{.sun_family = AF_UNIX};
  if (path.empty() || path.size() >= sizeof(address.sun_path)) return UniqueFd();
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return fd;
  memcpy(address.sun_path, path.c_str(), path.size() + 1);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return UniqueFd();
  }
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EgressBridge>> EgressBridge::Start(UniqueFd channel,
                                                                  EgressBridgeConfig config) {
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    return absl::InternalError(absl::StrCat("egress bridge: pipe: ", strerror(errno)));
  }
  auto bridge =
      std::unique_ptr<EgressBridge>(new EgressBridge(UniqueFd(wake[0]), UniqueFd(wake[1])));
  bridge->thread_ =
      std::thread(&EgressBridge::Run, bridge.get(), std::move(channel), std::move(config));
  return bridge;
}

void EgressBridge::Stop() {
  if (!thread_.joinable()) return;
  const char byte = 0;
  while (write(wake_write_.get(), &byte, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  wake_read_.Reset();
  wake_write_.Reset();
}

std::string EgressBridge::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

void EgressBridge::Run(UniqueFd channel, EgressBridgeConfig config) {
  const std::string sockets[kEgressListeners] = {config.http_socket, config.socks_socket};
  EgressEndpoint endpoint(EgressEndpoint::Role::kHost, std::move(channel),
                          [&sockets](EgressListener listener) {
                            return ConnectProxy(sockets[static_cast<uint8_t>(listener)]);
                          });
  std::vector<pollfd> fds;
  while (true) {
    fds.assign(1, {wake_read_.get(), POLLIN, 0});
    endpoint.Fill(&fds);
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) {
      std::lock_guard<std::mutex> lock(mu_);
      failure_ = absl::StrCat("poll: ", strerror(errno));
      break;
    }
    if (fds[0].revents != 0) break;  // Stop
    const bool open = endpoint.Handle(fds.data() + 1, fds.size() - 1);
    streams_ = endpoint.streams();
    toward_proxies_ = endpoint.toward_sockets();
    peak_toward_proxies_ = endpoint.peak_toward_sockets();
    peak_toward_guest_ = endpoint.peak_outbox();
    if (!open) {
      const bool broken = endpoint.state() == EgressEndpoint::State::kBroken;
      if (broken) {
        // The guest is not trusted any more: nothing it sends is relayed.
        spdlog::warn("microVM {}: the guest broke the egress channel ({}); its streams are closed",
                     config.name, endpoint.error());
      }
      std::lock_guard<std::mutex> lock(mu_);
      failure_ = endpoint.error();
      misbehaved_ = broken;
      break;
    }
  }
  endpoint.ResetAll();
  streams_ = 0;
  toward_proxies_ = 0;
  // The endpoint's channel and streams close here; Stop still waits for its wake-up byte.
}

}  // namespace ccsandbox::broker::microvm
