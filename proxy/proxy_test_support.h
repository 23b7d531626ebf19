// Test-only: loopback upstream servers and blocking client helpers for the proxy tests and the
// benchmark. Everything binds 127.0.0.1 or ::1 only.
#ifndef CCSANDBOX_PROXY_PROXY_TEST_SUPPORT_H_
#define CCSANDBOX_PROXY_PROXY_TEST_SUPPORT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/unique_fd.h"

namespace ccsandbox::proxy::testing {

using Fd = UniqueFd;

// A server on 127.0.0.1 (or ::1) with a thread per connection running `handler(fd)`.
class TestServer {
 public:
  using Handler = std::function<void(int fd)>;

  explicit TestServer(Handler handler, bool ipv6 = false);
  ~TestServer();

  uint16_t port() const { return port_; }
  bool ok() const { return listener_.valid(); }
  int accepted() const { return accepted_.load(); }

 private:
  void Run();

  Handler handler_;
  Fd listener_;
  uint16_t port_ = 0;
  std::atomic<int> accepted_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  absl::Mutex mu_;
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(mu_);
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);  // the workers' connections
};

// Echoes every byte until EOF, then closes.
void EchoHandler(int fd);

// Reads an 8-byte big-endian length, then sends that many bytes of Pattern(), then closes.
void SourceHandler(int fd);
char PatternByte(uint64_t offset);

// A one-request HTTP/1.1 origin: records the request head, reads a Content-Length body, and
// answers 200 with body "<method> <target>|<request body>".
class HttpOrigin {
 public:
  HttpOrigin();
  uint16_t port() const { return server_.port(); }
  std::vector<std::string> heads() const;
  int accepted() const { return server_.accepted(); }

 private:
  void Handle(int fd);
  mutable absl::Mutex mu_;
  std::vector<std::string> heads_ ABSL_GUARDED_BY(mu_);
  TestServer server_;
};

// A port on 127.0.0.1 that nothing listens on (bound, then closed).
uint16_t UnusedPort();

// Blocking client socket to 127.0.0.1:`port` (or [::1]), with 10 s send/receive timeouts.
Fd ConnectTo(uint16_t port, bool ipv6 = false);
bool SendAll(int fd, const std::string& data);
// Reads until `delimiter` has been seen (returns everything read), EOF, error or `max` bytes.
std::string ReadUntil(int fd, const std::string& delimiter, size_t max = 1 << 20);
std::string ReadExactly(int fd, size_t n);
std::string ReadToEof(int fd, size_t max = 64 << 20);
// True when the peer closed or reset the connection within `timeout`.
bool SeesClose(int fd, absl::Duration timeout);

// The status code of an HTTP response head ("HTTP/1.1 403 ..." -> 403), or -1.
int StatusCode(const std::string& response);
// The value of header `name` in a response head, or "".
std::string HeaderValue(const std::string& response, const std::string& name);

// SOCKS5 client steps. Returns the reply code of the request (0 = succeeded), or -1 when the
// proxy closed or answered something malformed.
int Socks5Handshake(int fd, bool with_userpass = false, const std::string& user = "",
                    const std::string& password = "");
int Socks5Request(int fd, uint8_t command, uint8_t address_type, const std::string& address,
                  uint16_t port);

}  // namespace ccsandbox::proxy::testing

#endif  // CCSANDBOX_PROXY_PROXY_TEST_SUPPORT_H_
