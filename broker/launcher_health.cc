#include "broker/launcher_health.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"
#include "spdlog/spdlog.h"

namespace ccsandbox::broker {
namespace {

// The health service names whose answer depends on the launcher.
constexpr const char* kNeedLauncher[] = {"", "ccsandbox.v1.SandboxBroker"};
// And those whose answer does not: always SERVING (named, so a per-service check resolves).
constexpr const char* kWithoutLauncher[] = {"ccsandbox.v1.SandboxPolicy",
                                            "ccsandbox.v1.SandboxWorkspace"};

}  // namespace

std::string LauncherUnreachable(const std::string& address) {
  if (!absl::StartsWith(address, "unix:")) return "";
  const std::string path = address.substr(5);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::StrCat("launcher not reachable at ", path, ": path too long");
  }
  memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.valid() &&
      ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
    return "";
  }
  return absl::StrCat("launcher not reachable at ", path, ": ", strerror(errno));
}

LauncherHealth::LauncherHealth(std::shared_ptr<grpc::ChannelInterface> channel, std::string address,
                               grpc::HealthCheckServiceInterface* health, BrokerMetrics metrics)
    : channel_(std::move(channel)),
      address_(std::move(address)),
      health_(health),
      metrics_(std::move(metrics)) {
  for (const char* name : kWithoutLauncher) health_->SetServingStatus(name, true);
  thread_ = std::thread([this] { Watch(); });
}

LauncherHealth::~LauncherHealth() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void LauncherHealth::Watch() {
  bool first = true;
  bool serving = false;
  for (;;) {
    bool up = channel_->GetState(true) == GRPC_CHANNEL_READY ||
              channel_->WaitForConnected(std::chrono::system_clock::now() +
                                         std::chrono::milliseconds(500));
    std::string why;
    if (!up) {
      why = LauncherUnreachable(address_);
      if (why.empty()) why = absl::StrCat("launcher not reachable at ", address_);
    }
    metrics_.LauncherReachable(up, /*back=*/!first && up && !serving);
    if (first || up != serving) {
      for (const char* name : kNeedLauncher) health_->SetServingStatus(name, up);
      if (!up) {
        spdlog::warn("{}; health NOT_SERVING until it is back", why);
      } else if (!first) {
        spdlog::info("launcher at {} reachable again; health SERVING", address_);
      }
      serving = up;
      first = false;
    }
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Seconds(1))) return;
  }
}

}  // namespace ccsandbox::broker
