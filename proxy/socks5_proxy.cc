#include "proxy/socks5_proxy.h"

#include <array>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "asio/error.hpp"
#include "asio/write.hpp"
#include "proxy/credentials.h"
#include "proxy/tunnel.h"

namespace ccsandbox::proxy {
namespace {

// Greeting (≤ 257) + credentials (≤ 513) + request (≤ 262), if a client sends them all at once.
constexpr size_t kMaxNegotiationBytes = 1100;
constexpr size_t kReadChunk = 512;

policy::IpAddress ToPolicy(const asio::ip::address& address) {
  if (address.is_v4()) {
    const auto b = address.to_v4().to_bytes();
    return policy::IpAddress::V4(b[0], b[1], b[2], b[3]);
  }
  const auto b = address.to_v6().to_bytes();
  std::array<uint8_t, 16> bytes;
  std::copy(b.begin(), b.end(), bytes.begin());
  return policy::IpAddress::V6(bytes);
}

uint8_t ReplyForConnectError(const std::error_code& error) {
  if (error == asio::error::connection_refused) return kSocks5ConnectionRefused;
  if (error == asio::error::network_unreachable) return kSocks5NetworkUnreachable;
  if (error == asio::error::host_unreachable) return kSocks5HostUnreachable;
  return kSocks5GeneralFailure;
}

}  // namespace

Socks5ProxyConnection::Socks5ProxyConnection(std::shared_ptr<SessionState> state,
                                             asio::ip::tcp::socket client, bool over_limit)
    : SessionChild(state),
      client_(std::move(client)),
      timer_(state->context()),
      over_limit_(over_limit) {}

void Socks5ProxyConnection::Start(std::shared_ptr<SessionState> state,
                                  asio::ip::tcp::socket client, bool over_limit) {
  auto connection = std::make_shared<Socks5ProxyConnection>(state, std::move(client), over_limit);
  state->Register(connection, /*refusing=*/over_limit);
  connection->Begin();
}

std::shared_ptr<Socks5ProxyConnection> Socks5ProxyConnection::self() {
  return std::static_pointer_cast<Socks5ProxyConnection>(shared_from_this());
}

void Socks5ProxyConnection::Begin() {
  if (closed_) return;
  ArmTimer(absl::ToChronoNanoseconds(state().options().timeouts.handshake));
  Read();
}

void Socks5ProxyConnection::ArmTimer(std::chrono::nanoseconds timeout) {
  timer_.expires_after(timeout);
  timer_.async_wait([self = self()](const std::error_code& ec) {
    // Negotiation too slow, or a failure reply the client never reads: either way, gone. While
    // connecting, the connector's own deadline applies.
    if (!ec && self->phase_ != Phase::kConnecting) self->Close();
  });
}

void Socks5ProxyConnection::Read() {
  if (buffer_.size() >= kMaxNegotiationBytes) {
    Close();
    return;
  }
  const size_t old_size = buffer_.size();
  const size_t room = std::min(kReadChunk, kMaxNegotiationBytes - old_size);
  buffer_.resize(old_size + room);
  client_.async_read_some(asio::buffer(buffer_.data() + old_size, room),
                          [self = self(), old_size](const std::error_code& ec, size_t n) {
                            if (self->closed_) return;
                            self->buffer_.resize(old_size + n);
                            if (ec) {
                              self->Close();
                              return;
                            }
                            self->OnBytes();
                          });
}

void Socks5ProxyConnection::OnBytes() {
  switch (phase_) {
    case Phase::kGreeting: {
      Socks5Parse<Socks5Greeting> greeting = ParseSocks5Greeting(buffer_);
      if (greeting.state == Socks5ParseState::kIncomplete) return Read();
      if (greeting.state == Socks5ParseState::kInvalid) return Close();
      buffer_.erase(0, greeting.consumed);
      const bool need_credentials = state().options().credentials.has_value();
      const uint8_t method = ChooseSocks5Method(greeting.value, need_credentials);
      if (method == kSocks5MethodNoneAcceptable) {
        phase_ = Phase::kDone;
        ArmTimer(std::chrono::seconds(2));
        WriteThen(BuildSocks5MethodSelection(method), [this] { DrainAndClose(); });
        return;
      }
      phase_ = method == kSocks5MethodUserPass ? Phase::kAuth : Phase::kRequest;
      WriteThen(BuildSocks5MethodSelection(method), [this] { OnBytes(); });
      return;
    }
    case Phase::kAuth: {
      Socks5Parse<Socks5Credentials> auth = ParseSocks5UserPass(buffer_);
      if (auth.state == Socks5ParseState::kIncomplete) return Read();
      if (auth.state == Socks5ParseState::kInvalid) return Close();
      buffer_.erase(0, auth.consumed);
      const std::optional<ProxyCredentials>& required = state().options().credentials;
      const bool ok = !required.has_value() ||
                      CredentialsMatch(*required, auth.value.username, auth.value.password);
      if (!ok) {
        phase_ = Phase::kDone;
        ArmTimer(std::chrono::seconds(2));
        WriteThen(BuildSocks5UserPassReply(false), [this] { DrainAndClose(); });
        return;
      }
      phase_ = Phase::kRequest;
      WriteThen(BuildSocks5UserPassReply(true), [this] { OnBytes(); });
      return;
    }
    case Phase::kRequest: {
      Socks5Parse<Socks5Request> request = ParseSocks5Request(buffer_);
      if (request.state == Socks5ParseState::kIncomplete) return Read();
      if (request.state == Socks5ParseState::kInvalid) return FailAndClose(request.reply);
      buffer_.erase(0, request.consumed);
      HandleRequest(request.value);
      return;
    }
    case Phase::kConnecting:
    case Phase::kDone:
      return;
  }
}

void Socks5ProxyConnection::HandleRequest(const Socks5Request& request) {
  policy::EgressDecision decision = state().allowlist().CheckHost(request.host, request.port);
  target_ = decision.target;
  if (request.command != kSocks5CommandConnect) {
    const std::string reason =
        request.command == kSocks5CommandBind ? "SOCKS5 BIND is not supported (only CONNECT)"
        : request.command == kSocks5CommandUdpAssociate
            ? "SOCKS5 UDP ASSOCIATE is not supported (only CONNECT)"
            : absl::StrFormat("SOCKS5 command 0x%02x is not supported", request.command);
    state().ReportViolation("socks5", target_, reason);
    return FailAndClose(kSocks5CommandNotSupported);
  }
  if (!decision.allowed) {
    state().ReportViolation("socks5", target_, decision.reason);
    return FailAndClose(kSocks5NotAllowed);
  }
  if (over_limit_) {
    // One session may not take the descriptors every other session and Launch need.
    state().ReportViolation("socks5", target_, state().LimitReason(), /*log=*/false);
    return FailAndClose(kSocks5GeneralFailure);
  }
  phase_ = Phase::kConnecting;
  connector_ = UpstreamConnector::Start(
      state_ptr(), std::move(decision), request.port,
      [self = self()](UpstreamResult result) { self->OnUpstream(std::move(result)); });
}

void Socks5ProxyConnection::OnUpstream(UpstreamResult result) {
  connector_.reset();
  if (closed_) return;
  phase_ = Phase::kDone;
  switch (result.kind) {
    case UpstreamResult::Kind::kConnected:
      break;
    case UpstreamResult::Kind::kRefused:
      state().ReportViolation("socks5", target_, result.reason);
      return FailAndClose(kSocks5NotAllowed);
    case UpstreamResult::Kind::kResolveFailed:
    case UpstreamResult::Kind::kTimedOut:
      return FailAndClose(kSocks5HostUnreachable);
    case UpstreamResult::Kind::kConnectFailed:
      return FailAndClose(ReplyForConnectError(result.error));
  }
  std::error_code ec;
  const asio::ip::tcp::endpoint bound = result.socket->local_endpoint(ec);
  std::string reply =
      ec ? BuildSocks5Reply(kSocks5Succeeded)
         : BuildSocks5Reply(kSocks5Succeeded, ToPolicy(bound.address()), bound.port());
  std::string early = std::move(buffer_);
  closed_ = true;
  timer_.cancel();
  // The tunnel takes over this connection's place: count it once, not twice.
  state().Unregister(this);
  Tunnel::Start(state_ptr(), std::move(client_), std::move(*result.socket), std::move(reply),
                std::move(early));
}

void Socks5ProxyConnection::WriteThen(std::string bytes, std::function<void()> next) {
  auto data = std::make_shared<std::string>(std::move(bytes));
  asio::async_write(
      client_, asio::buffer(*data),
      [self = self(), data, next = std::move(next)](const std::error_code& ec, size_t) {
        if (self->closed_) return;
        if (ec) {
          self->Close();
          return;
        }
        next();
      });
}

void Socks5ProxyConnection::FailAndClose(uint8_t reply) {
  phase_ = Phase::kDone;
  ArmTimer(std::chrono::seconds(2));
  WriteThen(BuildSocks5Reply(reply), [this] { DrainAndClose(); });
}

void Socks5ProxyConnection::DrainAndClose() {
  phase_ = Phase::kDone;
  std::error_code ignored;
  client_.shutdown(asio::socket_base::shutdown_send, ignored);
  buffer_.resize(kReadChunk);
  client_.async_read_some(asio::buffer(buffer_),
                          [self = self()](const std::error_code& ec, size_t) {
                            if (self->closed_) return;
                            if (ec) return self->Close();
                            self->DrainAndClose();
                          });
}

void Socks5ProxyConnection::Close() {
  if (closed_) return;
  closed_ = true;
  std::error_code ignored;
  timer_.cancel();
  if (connector_ != nullptr) {
    connector_->Cancel();
    connector_.reset();
  }
  client_.close(ignored);
}

}  // namespace ccsandbox::proxy
