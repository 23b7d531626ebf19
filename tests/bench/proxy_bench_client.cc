#include "tests/bench/proxy_bench_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ccsandbox::bench {
namespace {

UniqueFd Connect(uint16_t port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return UniqueFd();
  return fd;
}

sockaddr_un UnixAddress(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, sizeof(a.sun_path) - 1);
  return a;
}

UniqueFd ConnectUnix(const std::string& path) {
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_un a = UnixAddress(path);
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof(a)) != 0) return UniqueFd();
  return fd;
}

}  // namespace

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kDirect:
      return "direct";
    case Mode::kHttpConnect:
      return "http CONNECT";
    case Mode::kSocks5:
      return "socks5";
    case Mode::kRelay:
      return "relay";
  }
  return "";
}

const char* ModeFlagName(Mode mode) {
  switch (mode) {
    case Mode::kDirect:
      return "direct";
    case Mode::kHttpConnect:
      return "http";
    case Mode::kSocks5:
      return "socks5";
    case Mode::kRelay:
      return "relay";
  }
  return "";
}

UniqueFd Open(Mode mode, const Target& t) {
  if (mode == Mode::kDirect) return Connect(t.upstream);
  if (mode == Mode::kRelay) return Connect(t.relay);
  const std::string& unix_path = mode == Mode::kHttpConnect ? t.http_unix : t.socks_unix;
  UniqueFd fd = !unix_path.empty() ? ConnectUnix(unix_path)
                                   : Connect(mode == Mode::kHttpConnect ? t.http : t.socks);
  if (!fd.valid()) return fd;
  const bool ok = mode == Mode::kHttpConnect
                      ? SendAll(fd.get(), absl::StrCat("CONNECT ", kBenchHost, ":", t.upstream,
                                                       " HTTP/1.1\r\nHost: ", kBenchHost, ":",
                                                       t.upstream, "\r\n\r\n")) &&
                            ReadConnectReply(fd.get())
                      : Socks5Connect(fd.get(), kBenchHost, t.upstream);
  return ok ? std::move(fd) : UniqueFd();
}

bool OneRoundTrip(Mode mode, const Target& t) {
  const UniqueFd fd = Open(mode, t);
  if (!fd.valid()) return false;
  char c = 0;
  return SendAll(fd.get(), "Ex", 2) && ReadExactly(fd.get(), &c, 1) && c == 'x';
}

UniqueFd ListenUnix(const std::string& path) {
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_un a = UnixAddress(path);
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(fd.get(), 4096) != 0) {
    return UniqueFd();
  }
  return fd;
}

bool ReadConnectReply(int fd) {
  char head[1024];
  size_t got = 0;
  while (got < sizeof(head)) {
    const ssize_t n = read(fd, head + got, sizeof(head) - got);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
    const std::string_view view(head, got);
    const size_t end = view.find("\r\n\r\n");
    if (end != std::string_view::npos) {
      return view.rfind("HTTP/1.1 200", 0) == 0 && end + 4 == got;
    }
  }
  return false;
}

bool Socks5Connect(int fd, const std::string& host, uint16_t port) {
  // Greeting (no auth) and request pipelined in one write, as fast clients do.
  std::string out("\x05\x01\x00", 3);
  out += std::string{5, 1, 0, 3, static_cast<char>(host.size())};
  out += host;
  out.push_back(static_cast<char>(port >> 8));
  out.push_back(static_cast<char>(port & 0xff));
  if (!SendAll(fd, out)) return false;
  // Method selection, then the reply up to its bound address's type.
  char reply[6];
  if (!ReadExactly(fd, reply, sizeof(reply)) || reply[1] != 0 || reply[3] != 0) return false;
  const size_t rest = reply[5] == 1 ? 4 + 2 : reply[5] == 4 ? 16 + 2 : 0;
  char bound[16 + 2];
  return rest != 0 && ReadExactly(fd, bound, rest);
}

bool SendAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool SendAll(int fd, const std::string& s) { return SendAll(fd, s.data(), s.size()); }

bool ReadExactly(int fd, char* out, size_t n) {
  while (n > 0) {
    const ssize_t r = read(fd, out, n);
    if (r <= 0) return false;
    out += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace ccsandbox::bench
