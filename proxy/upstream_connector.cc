#include "proxy/upstream_connector.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "proxy/ip_address.h"

namespace ccsandbox::proxy {

UpstreamConnector::UpstreamConnector(std::shared_ptr<SessionState> state,
                                     policy::EgressDecision decision, uint16_t port, Callback done)
    : state_(std::move(state)),
      decision_(std::move(decision)),
      port_(port),
      done_(std::move(done)),
      deadline_(state_->context()),
      socket_(state_->context()) {}

std::shared_ptr<UpstreamConnector> UpstreamConnector::Start(std::shared_ptr<SessionState> state,
                                                            policy::EgressDecision decision,
                                                            uint16_t port, Callback done) {
  auto connector = std::make_shared<UpstreamConnector>(std::move(state), std::move(decision), port,
                                                       std::move(done));
  connector->Begin();
  return connector;
}

void UpstreamConnector::Begin() {
  const absl::Duration timeout = state_->options().timeouts.connect;
  deadline_.expires_after(absl::ToChronoNanoseconds(timeout));
  deadline_.async_wait([self = shared_from_this(), timeout](const std::error_code& ec) {
    if (ec || self->finished_) return;
    self->Finish(UpstreamResult::Kind::kTimedOut,
                 absl::StrCat("upstream ", self->decision_.target, " did not answer within ",
                              absl::FormatDuration(timeout)));
  });
  if (decision_.host->is_ip()) {
    OnResolved(Resolver::Addresses{ToAsioAddress(*decision_.host->ip)});
    return;
  }
  std::weak_ptr<UpstreamConnector> weak = shared_from_this();
  state_->resolver().Resolve(decision_.host->name, state_->context().get_executor(),
                             [weak](absl::StatusOr<Resolver::Addresses> addresses) {
                               if (auto self = weak.lock()) self->OnResolved(std::move(addresses));
                             });
}

void UpstreamConnector::OnResolved(absl::StatusOr<Resolver::Addresses> addresses) {
  if (finished_) return;
  if (!addresses.ok()) {
    Finish(UpstreamResult::Kind::kResolveFailed, std::string(addresses.status().message()));
    return;
  }
  std::string first_refusal;
  for (const asio::ip::address& address : *addresses) {
    absl::Status allowed = state_->allowlist().CheckAddress(decision_, ToPolicyAddress(address));
    if (allowed.ok()) {
      // A v4-mapped answer connects as plain IPv4, the form that was checked.
      candidates_.push_back(ToAsioAddress(ToPolicyAddress(address)));
    } else if (first_refusal.empty()) {
      first_refusal = std::string(allowed.message());
    }
  }
  if (candidates_.empty()) {
    Finish(UpstreamResult::Kind::kRefused, first_refusal.empty() ? "no addresses" : first_refusal);
    return;
  }
  ConnectNext();
}

void UpstreamConnector::ConnectNext() {
  if (next_ >= candidates_.size()) {
    Finish(
        UpstreamResult::Kind::kConnectFailed,
        absl::StrCat("upstream connect to ", decision_.target, " failed: ", last_error_.message()),
        last_error_);
    return;
  }
  const asio::ip::tcp::endpoint endpoint(candidates_[next_++], port_);
  std::error_code ec;
  socket_.close(ec);
  socket_.async_connect(endpoint, [self = shared_from_this()](const std::error_code& error) {
    if (self->finished_) return;
    if (error) {
      self->last_error_ = error;
      self->ConnectNext();
      return;
    }
    self->Finish(UpstreamResult::Kind::kConnected, "");
  });
}

void UpstreamConnector::Finish(UpstreamResult::Kind kind, std::string reason,
                               std::error_code error) {
  if (finished_) return;
  finished_ = true;
  std::error_code ignored;
  deadline_.cancel();
  UpstreamResult result;
  result.kind = kind;
  result.reason = std::move(reason);
  result.error = error;
  if (kind == UpstreamResult::Kind::kConnected) {
    socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
    result.socket.emplace(std::move(socket_));
  } else {
    socket_.close(ignored);
  }
  Callback done = std::move(done_);
  done_ = nullptr;
  if (done) done(std::move(result));
}

void UpstreamConnector::Cancel() {
  if (finished_) return;
  finished_ = true;
  done_ = nullptr;
  std::error_code ignored;
  deadline_.cancel();
  socket_.close(ignored);
}

}  // namespace ccsandbox::proxy
