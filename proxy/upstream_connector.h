// Internal: from an allowed EgressDecision to a connected upstream socket: resolve the name
// (unless it is an IP literal), keep only the addresses the rebinding guard passes, connect to
// them in order, all under one deadline. The socket is connected to an address that was
// checked; the name is never resolved again.
#ifndef CCSANDBOX_PROXY_UPSTREAM_CONNECTOR_H_
#define CCSANDBOX_PROXY_UPSTREAM_CONNECTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "asio/ip/tcp.hpp"
#include "asio/steady_timer.hpp"
#include "policy/egress/allowlist.h"
#include "proxy/session_state.h"

namespace ccsandbox::proxy {

struct UpstreamResult {
  enum class Kind {
    kConnected,
    kRefused,        // every address failed the rebinding guard or the deny list
    kResolveFailed,  // no addresses
    kConnectFailed,  // every connect failed (error holds the last errno)
    kTimedOut,       // resolve + connect took longer than the connect timeout
  };
  Kind kind = Kind::kConnectFailed;
  std::string reason;  // one line for logs, X-Sandbox-Reason and violations
  std::error_code error;
  std::optional<asio::ip::tcp::socket> socket;  // kConnected only
};

class UpstreamConnector : public std::enable_shared_from_this<UpstreamConnector> {
 public:
  using Callback = std::function<void(UpstreamResult)>;

  // Starts connecting to the allowed `decision` on `port`; `done` runs once on the loop thread
  // unless Cancel() comes first.
  static std::shared_ptr<UpstreamConnector> Start(std::shared_ptr<SessionState> state,
                                                  policy::EgressDecision decision, uint16_t port,
                                                  Callback done);

  // Stops everything in flight; `done` is never called after this.
  void Cancel();

  UpstreamConnector(std::shared_ptr<SessionState> state, policy::EgressDecision decision,
                    uint16_t port, Callback done);

 private:
  void Begin();
  void OnResolved(absl::StatusOr<Resolver::Addresses> addresses);
  void ConnectNext();
  void Finish(UpstreamResult::Kind kind, std::string reason, std::error_code error = {});

  std::shared_ptr<SessionState> state_;
  const policy::EgressDecision decision_;
  const uint16_t port_;
  Callback done_;
  asio::steady_timer deadline_;
  asio::ip::tcp::socket socket_;
  std::vector<asio::ip::address> candidates_;
  size_t next_ = 0;
  std::error_code last_error_;
  bool finished_ = false;
};

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_UPSTREAM_CONNECTOR_H_
