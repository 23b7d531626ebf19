#include "proxy/client_connection.h"

#include <algorithm>
#include <utility>

#include "absl/time/time.h"
#include "asio/write.hpp"
#include "proxy/tunnel.h"

namespace ccsandbox::proxy {
namespace {

// How long a client has to read its error reply (and close) before it is cut off.
constexpr std::chrono::seconds kReplyGrace(2);

}  // namespace

ClientConnection::ClientConnection(std::shared_ptr<SessionState> state,
                                   asio::ip::tcp::socket client, bool over_limit, ReadLimits limits)
    : SessionChild(state),
      client_(std::move(client)),
      timer_(state->context()),
      limits_(limits),
      over_limit_(over_limit) {}

std::shared_ptr<ClientConnection> ClientConnection::self() {
  return std::static_pointer_cast<ClientConnection>(shared_from_this());
}

void ClientConnection::Begin() {
  if (closed_) return;
  ArmTimer(absl::ToChronoNanoseconds(state().options().timeouts.handshake));
  Read();
}

void ClientConnection::ArmTimer(std::chrono::nanoseconds timeout) {
  timer_.expires_after(timeout);
  timer_.async_wait([self = self()](const std::error_code& ec) {
    if (ec || self->closed_) return;
    if (self->replying_) {
      self->Close();  // a client that never reads its error reply
      return;
    }
    self->OnHandshakeTimeout();
  });
}

void ClientConnection::Read() {
  if (buffer_.size() >= limits_.buffered) {
    Close();
    return;
  }
  const size_t old_size = buffer_.size();
  const size_t room = std::min(limits_.chunk, limits_.buffered - old_size);
  buffer_.resize(old_size + room);
  client_.async_read_some(asio::buffer(buffer_.data() + old_size, room),
                          [self = self(), old_size](const std::error_code& ec, size_t n) {
                            if (self->closed_) return;
                            self->buffer_.resize(old_size + n);
                            if (ec) {
                              self->Close();  // gone before finishing: nothing to answer
                              return;
                            }
                            self->OnBytes();
                          });
}

void ClientConnection::WriteThen(std::string bytes, std::function<void()> next) {
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

void ClientConnection::ReplyAndClose(std::string bytes) {
  if (closed_ || replying_) return;
  replying_ = true;
  ArmTimer(kReplyGrace);
  WriteThen(std::move(bytes), [this] { DrainAndClose(); });
}

void ClientConnection::DrainAndClose() {
  std::error_code ignored;
  client_.shutdown(asio::socket_base::shutdown_send, ignored);
  buffer_.resize(limits_.chunk);
  client_.async_read_some(asio::buffer(buffer_),
                          [self = self()](const std::error_code& ec, size_t) {
                            if (self->closed_) return;
                            if (ec) {
                              self->Close();
                              return;
                            }
                            self->DrainAndClose();
                          });
}

void ClientConnection::ConnectUpstream(policy::EgressDecision decision, uint16_t port) {
  connector_ = UpstreamConnector::Start(state_ptr(), std::move(decision), port,
                                        [self = self()](UpstreamResult result) {
                                          self->connector_.reset();
                                          if (self->closed_) return;
                                          self->OnUpstream(std::move(result));
                                        });
}

void ClientConnection::BecomeTunnel(asio::ip::tcp::socket upstream, std::string to_client,
                                    std::string to_upstream) {
  closed_ = true;
  timer_.cancel();
  // The tunnel takes over this connection's place: count it once, not twice.
  state().Unregister(this);
  Tunnel::Start(state_ptr(), std::move(client_), std::move(upstream), std::move(to_client),
                std::move(to_upstream));
}

void ClientConnection::Close() {
  if (closed_) return;
  closed_ = true;
  timer_.cancel();
  if (connector_ != nullptr) {
    connector_->Cancel();
    connector_.reset();
  }
  std::error_code ignored;
  client_.close(ignored);
}

}  // namespace ccsandbox::proxy
