#include "tests/bench/bench_upstream.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <system_error>
#include <vector>

#include "asio/read.hpp"
#include "asio/write.hpp"

namespace ccsandbox::bench {
namespace {

class UpstreamConnection : public std::enable_shared_from_this<UpstreamConnection> {
 public:
  explicit UpstreamConnection(asio::ip::tcp::socket socket) : socket_(std::move(socket)) {}

  void Start() {
    asio::async_read(socket_, asio::buffer(buf_, 1),
                     [self = shared_from_this()](std::error_code ec, size_t) {
                       if (ec) return;
                       if (self->buf_[0] == 'S') {
                         self->ReadLength();
                       } else {
                         self->Echo();
                       }
                     });
  }

 private:
  // A constant chunk: the upstream must cost as little as possible, or it caps the direct
  // figure every ratio is taken against.
  static const std::vector<char>& Chunk() {
    static const std::vector<char> chunk(1 << 20, 'x');
    return chunk;
  }

  void ReadLength() {
    asio::async_read(socket_, asio::buffer(buf_, 8),
                     [self = shared_from_this()](std::error_code ec, size_t) {
                       if (ec) return;
                       uint64_t n = 0;
                       for (int i = 0; i < 8; ++i)
                         n = (n << 8) | static_cast<uint8_t>(self->buf_[i]);
                       self->remaining_ = n;
                       self->Send();
                     });
  }

  void Send() {
    if (remaining_ == 0) {
      std::error_code ignored;
      socket_.shutdown(asio::socket_base::shutdown_send, ignored);
      Echo();  // drain until the client closes
      return;
    }
    const size_t n = std::min<uint64_t>(remaining_, Chunk().size());
    asio::async_write(socket_, asio::buffer(Chunk().data(), n),
                      [self = shared_from_this()](std::error_code ec, size_t sent) {
                        if (ec) return;
                        self->remaining_ -= sent;
                        self->Send();
                      });
  }

  void Echo() {
    socket_.async_read_some(asio::buffer(buf_),
                            [self = shared_from_this()](std::error_code ec, size_t n) {
                              if (ec) return;
                              asio::async_write(self->socket_, asio::buffer(self->buf_, n),
                                                [self](std::error_code ec2, size_t) {
                                                  if (!ec2) self->Echo();
                                                });
                            });
  }

  asio::ip::tcp::socket socket_;
  char buf_[4096];
  uint64_t remaining_ = 0;
};

void Accept(asio::ip::tcp::acceptor& acceptor) {
  acceptor.async_accept([&acceptor](std::error_code ec, asio::ip::tcp::socket socket) {
    if (!ec) {
      socket.set_option(asio::ip::tcp::no_delay(true));
      std::make_shared<UpstreamConnection>(std::move(socket))->Start();
    }
    Accept(acceptor);
  });
}

}  // namespace

void ServeUpstream(asio::ip::tcp::acceptor& acceptor) {
  acceptor.async_accept([&acceptor](std::error_code ec, asio::ip::tcp::socket socket) {
    if (!ec) {
      socket.set_option(asio::ip::tcp::no_delay(true));
      std::make_shared<UpstreamConnection>(std::move(socket))->Start();
    }
    ServeUpstream(acceptor);
  });
}

}  // namespace ccsandbox::bench
