#include "proxy/socks5_proxy.h"

#include <array>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "asio/error.hpp"
#include "proxy/credentials.h"
#include "proxy/ip_address.h"

namespace ccsandbox::proxy {
namespace {

// Greeting (≤ 257) + credentials (≤ 513) + request (≤ 262), if a client sends them all at once.
constexpr size_t kMaxNegotiationBytes = 1100;
constexpr size_t kReadChunk = 512;

uint8_t ReplyForConnectError(const std::error_code& error) {
  if (error == asio::error::connection_refused) return kSocks5ConnectionRefused;
  if (error == asio::error::network_unreachable) return kSocks5NetworkUnreachable;
  if (error == asio::error::host_unreachable) return kSocks5HostUnreachable;
  return kSocks5GeneralFailure;
}

}  // namespace

Socks5ProxyConnection::Socks5ProxyConnection(std::shared_ptr<SessionState> state,
                                             asio::ip::tcp::socket client, bool over_limit)
    : ClientConnection(std::move(state), std::move(client), over_limit,
                       {.chunk = kReadChunk, .buffered = kMaxNegotiationBytes}) {}

void Socks5ProxyConnection::OnHandshakeTimeout() {
  // Negotiation too slow: gone. While connecting, the connector's own deadline applies.
  if (phase_ != Phase::kConnecting) Close();
}

void Socks5ProxyConnection::Refuse(std::string bytes) {
  phase_ = Phase::kDone;
  ReplyAndClose(std::move(bytes));
}

void Socks5ProxyConnection::OnBytes() {
  switch (phase_) {
    case Phase::kGreeting: {
      Socks5Parse<Socks5Greeting> greeting = ParseSocks5Greeting(buffer());
      if (greeting.state == Socks5ParseState::kIncomplete) return Read();
      if (greeting.state == Socks5ParseState::kInvalid) return Close();
      buffer().erase(0, greeting.consumed);
      const bool need_credentials = state().options().credentials.has_value();
      const uint8_t method = ChooseSocks5Method(greeting.value, need_credentials);
      if (method == kSocks5MethodNoneAcceptable) return Refuse(BuildSocks5MethodSelection(method));
      phase_ = method == kSocks5MethodUserPass ? Phase::kAuth : Phase::kRequest;
      WriteThen(BuildSocks5MethodSelection(method), [this] { OnBytes(); });
      return;
    }
    case Phase::kAuth: {
      Socks5Parse<Socks5Credentials> auth = ParseSocks5UserPass(buffer());
      if (auth.state == Socks5ParseState::kIncomplete) return Read();
      if (auth.state == Socks5ParseState::kInvalid) return Close();
      buffer().erase(0, auth.consumed);
      const std::optional<ProxyCredentials>& required = state().options().credentials;
      const bool ok = !required.has_value() ||
                      CredentialsMatch(*required, auth.value.username, auth.value.password);
      if (!ok) return Refuse(BuildSocks5UserPassReply(false));
      phase_ = Phase::kRequest;
      WriteThen(BuildSocks5UserPassReply(true), [this] { OnBytes(); });
      return;
    }
    case Phase::kRequest: {
      Socks5Parse<Socks5Request> request = ParseSocks5Request(buffer());
      if (request.state == Socks5ParseState::kIncomplete) return Read();
      if (request.state == Socks5ParseState::kInvalid) {
        return Refuse(BuildSocks5Reply(request.reply));
      }
      buffer().erase(0, request.consumed);
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
    return Refuse(BuildSocks5Reply(kSocks5CommandNotSupported));
  }
  if (!decision.allowed) {
    state().ReportViolation("socks5", target_, decision.reason);
    return Refuse(BuildSocks5Reply(kSocks5NotAllowed));
  }
  if (over_limit()) {
    // One session may not take the descriptors every other session and Launch need.
    state().ReportViolation("socks5", target_, state().LimitReason(), /*log=*/false);
    return Refuse(BuildSocks5Reply(kSocks5GeneralFailure));
  }
  phase_ = Phase::kConnecting;
  ConnectUpstream(std::move(decision), request.port);
}

void Socks5ProxyConnection::OnUpstream(UpstreamResult result) {
  phase_ = Phase::kDone;
  switch (result.kind) {
    case UpstreamResult::Kind::kConnected:
      break;
    case UpstreamResult::Kind::kRefused:
      state().ReportViolation("socks5", target_, result.reason);
      return Refuse(BuildSocks5Reply(kSocks5NotAllowed));
    case UpstreamResult::Kind::kResolveFailed:
    case UpstreamResult::Kind::kTimedOut:
      return Refuse(BuildSocks5Reply(kSocks5HostUnreachable));
    case UpstreamResult::Kind::kConnectFailed:
      return Refuse(BuildSocks5Reply(ReplyForConnectError(result.error)));
  }
  std::error_code ec;
  const asio::ip::tcp::endpoint bound = result.socket->local_endpoint(ec);
  std::string reply =
      ec ? BuildSocks5Reply(kSocks5Succeeded)
         : BuildSocks5Reply(kSocks5Succeeded, ToPolicyAddress(bound.address()), bound.port());
  BecomeTunnel(std::move(*result.socket), std::move(reply), std::move(buffer()));
}

}  // namespace ccsandbox::proxy
