#include "proxy/proxy_test_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::proxy::testing {

namespace {

void SetTimeouts(int fd) {
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

}  // namespace

TestServer::TestServer(Handler handler, bool ipv6) : handler_(std::move(handler)) {
  Fd fd(socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage storage{};
  socklen_t length;
  if (ipv6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    length = sizeof(*a);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    length = sizeof(*a);
  }
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
      listen(fd.get(), 1024) != 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
    return;
  }
  port_ = ntohs(ipv6 ? reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port
                     : reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
  listener_ = std::move(fd);
  thread_ = std::thread([this] { Run(); });
}

TestServer::~TestServer() {
  stopping_ = true;
  if (listener_.valid()) shutdown(listener_.get(), SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  std::vector<std::thread> workers;
  {
    absl::MutexLock lock(&mu_);
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (std::thread& worker : workers) worker.join();
}

void TestServer::Run() {
  while (!stopping_) {
    Fd fd(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd.valid()) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    ++accepted_;
    int one = 1;
    setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    SetTimeouts(fd.get());
    absl::MutexLock lock(&mu_);
    open_fds_.push_back(fd.get());
    // The connection is closed with the worker's function, once the worker is done.
    workers_.emplace_back([this, fd = std::move(fd)] {
      handler_(fd.get());
      absl::MutexLock lock(&mu_);
      open_fds_.erase(std::find(open_fds_.begin(), open_fds_.end(), fd.get()));
    });
  }
}

void EchoHandler(int fd) {
  char buf[65536];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) return;
    if (!SendAll(fd, std::string(buf, n))) return;
  }
}

char PatternByte(uint64_t offset) { return static_cast<char>((offset * 2654435761u) >> 13); }

void SourceHandler(int fd) {
  const std::string header = ReadExactly(fd, 8);
  if (header.size() != 8) return;
  uint64_t total = 0;
  for (char c : header) total = (total << 8) | static_cast<uint8_t>(c);
  std::string chunk(256 * 1024, '\0');
  uint64_t sent = 0;
  while (sent < total) {
    const size_t n = std::min<uint64_t>(chunk.size(), total - sent);
    for (size_t i = 0; i < n; ++i) chunk[i] = PatternByte(sent + i);
    if (!SendAll(fd, chunk.substr(0, n))) return;
    sent += n;
  }
  shutdown(fd, SHUT_WR);
  char drain[256];
  while (read(fd, drain, sizeof(drain)) > 0) {
  }
}

HttpOrigin::HttpOrigin() : server_([this](int fd) { Handle(fd); }) {}

std::vector<std::string> HttpOrigin::heads() const {
  absl::MutexLock lock(&mu_);
  return heads_;
}

void HttpOrigin::Handle(int fd) {
  std::string data = ReadUntil(fd, "\r\n\r\n", 64 * 1024);
  const size_t end = data.find("\r\n\r\n");
  if (end == std::string::npos) return;
  const std::string head = data.substr(0, end + 4);
  std::string body = data.substr(end + 4);
  {
    absl::MutexLock lock(&mu_);
    heads_.push_back(head);
  }
  size_t content_length = 0;
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    if (absl::StartsWithIgnoreCase(line, "content-length:")) {
      (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(15)), &content_length);
    }
  }
  if (body.size() < content_length) body += ReadExactly(fd, content_length - body.size());
  const std::string request_line = head.substr(0, head.find("\r\n"));
  const std::vector<std::string> parts = absl::StrSplit(request_line, ' ');
  const std::string reply_body =
      (parts.size() >= 2 ? parts[0] + " " + parts[1] : request_line) + "|" + body;
  SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                  std::to_string(reply_body.size()) + "\r\nConnection: close\r\n\r\n" + reply_body);
  shutdown(fd, SHUT_WR);
  char drain[256];
  while (read(fd, drain, sizeof(drain)) > 0) {
  }
}

uint16_t UnusedPort() {
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(a);
  bind(fd.get(), reinterpret_cast<sockaddr*>(&a), length);
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &length);
  return ntohs(a.sin_port);
}

Fd ConnectTo(uint16_t port, bool ipv6) {
  Fd fd(socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  SetTimeouts(fd.get());
  int rc;
  if (ipv6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    a.sin6_port = htons(port);
    rc = connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    rc = connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
  }
  if (rc != 0) return Fd();
  return fd;
}

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string ReadUntil(int fd, const std::string& delimiter, size_t max) {
  std::string out;
  char c;
  // One byte at a time: never reads past the delimiter (tests then read the tunnel's bytes).
  while (out.size() < max) {
    const ssize_t n = read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.push_back(c);
    if (out.size() >= delimiter.size() &&
        out.compare(out.size() - delimiter.size(), delimiter.size(), delimiter) == 0) {
      break;
    }
  }
  return out;
}

std::string ReadExactly(int fd, size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = read(fd, out.data() + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

std::string ReadToEof(int fd, size_t max) {
  std::string out;
  char buf[65536];
  while (out.size() < max) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

bool SeesClose(int fd, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  char buf[4096];
  while (absl::Now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    const int ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now())) + 1;
    if (poll(&p, 1, ms) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0 && errno != EAGAIN && errno != EINTR) return true;
  }
  return false;
}

int StatusCode(const std::string& response) {
  if (!absl::StartsWith(response, "HTTP/1.")) return -1;
  int code = -1;
  if (response.size() < 12 || !absl::SimpleAtoi(response.substr(9, 3), &code)) return -1;
  return code;
}

std::string HeaderValue(const std::string& response, const std::string& name) {
  const std::string head = response.substr(0, response.find("\r\n\r\n"));
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    const size_t colon = line.find(':');
    if (colon != absl::string_view::npos && absl::EqualsIgnoreCase(line.substr(0, colon), name)) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "";
}

int Socks5Handshake(int fd, bool with_userpass, const std::string& user,
                    const std::string& password) {
  const std::string greeting =
      with_userpass ? std::string("\x05\x01\x02", 3) : std::string("\x05\x01\x00", 3);
  if (!SendAll(fd, greeting)) return -1;
  const std::string selection = ReadExactly(fd, 2);
  if (selection.size() != 2 || selection[0] != 5) return -1;
  if (static_cast<uint8_t>(selection[1]) == 0xff) return 0xff;
  if (selection[1] == 0x02) {
    std::string auth = {1, static_cast<char>(user.size())};
    auth += user;
    auth.push_back(static_cast<char>(password.size()));
    auth += password;
    if (!SendAll(fd, auth)) return -1;
    const std::string status = ReadExactly(fd, 2);
    if (status.size() != 2) return -1;
    return static_cast<uint8_t>(status[1]);
  }
  return 0;
}

int Socks5Request(int fd, uint8_t command, uint8_t address_type, const std::string& address,
                  uint16_t port) {
  std::string request = {5, static_cast<char>(command), 0, static_cast<char>(address_type)};
  if (address_type == 1) {
    in_addr a{};
    inet_pton(AF_INET, address.c_str(), &a);
    request.append(reinterpret_cast<const char*>(&a), 4);
  } else if (address_type == 4) {
    in6_addr a{};
    inet_pton(AF_INET6, address.c_str(), &a);
    request.append(reinterpret_cast<const char*>(&a), 16);
  } else {
    request.push_back(static_cast<char>(address.size()));
    request += address;
  }
  request.push_back(static_cast<char>(port >> 8));
  request.push_back(static_cast<char>(port & 0xff));
  if (!SendAll(fd, request)) return -1;
  const std::string head = ReadExactly(fd, 4);
  if (head.size() != 4 || head[0] != 5) return -1;
  const size_t address_length = head[3] == 1 ? 4 : head[3] == 4 ? 16 : 0;
  if (address_length == 0) return -1;
  if (ReadExactly(fd, address_length + 2).size() != address_length + 2) return -1;
  return static_cast<uint8_t>(head[1]);
}

}  // namespace ccsandbox::proxy::testing
