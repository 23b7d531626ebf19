// A session's proxies' lifecycle: the listeners they open or are given (TCP and Unix), Stop
// closing listeners and every tunnel, and what Start refuses. The other SessionProxies tests
// are by subject: session_proxies_{http,socks5,policy,timeouts,limits}_test.
#include "proxy/session_proxies.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "policy/egress/allowlist.h"
#include "proxy/event_loop.h"
#include "proxy/proxy_test_support.h"
#include "proxy/resolver.h"
#include "proxy/session_proxies_fixture.h"
#include "proxy/socks5_parser.h"

namespace ccsandbox::proxy {
namespace {

using testing::ConnectTo;
using testing::Fd;
using testing::ReadExactly;
using testing::SeesClose;
using testing::SendAll;
using testing::SessionProxiesTest;
using testing::Socks5Handshake;
using testing::Socks5Request;
using testing::StatusCode;

TEST_F(SessionProxiesTest, StopClosesListenersAndEveryTunnel) {
  auto proxies = Start({Allowed(echo_.port())});
  const uint16_t http_port = proxies->http_port();
  const uint16_t socks_port = proxies->socks_port();
  std::vector<Fd> tunnels;
  for (int i = 0; i < 5; ++i) {
    tunnels.push_back(ConnectTo(http_port));
    ASSERT_EQ(StatusCode(Connect(tunnels.back().get(), Allowed(echo_.port()))), 200);
  }
  Fd negotiating = ConnectTo(socks_port);
  SendAll(negotiating.get(), std::string("\x05", 1));
  Fd half_head = ConnectTo(http_port);
  SendAll(half_head.get(), "CONNECT allowed");
  EXPECT_TRUE(AwaitOpen(*proxies, 7));
  proxies->Stop();
  EXPECT_EQ(proxies->open_connections(), 0u);
  for (Fd& fd : tunnels) EXPECT_TRUE(SeesClose(fd.get(), absl::Seconds(5)));
  EXPECT_TRUE(SeesClose(negotiating.get(), absl::Seconds(5)));
  EXPECT_TRUE(SeesClose(half_head.get(), absl::Seconds(5)));
  EXPECT_FALSE(ConnectTo(http_port).valid());
  EXPECT_FALSE(ConnectTo(socks_port).valid());
  proxies->Stop();  // idempotent
}

TEST_F(SessionProxiesTest, ServesListeningSocketsItIsGiven) {
  // As the launcher would create them inside the sandbox's network namespace.
  auto listener = [] {
    Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(a);
    bind(fd.get(), reinterpret_cast<sockaddr*>(&a), length);
    listen(fd.get(), 16);
    getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &length);
    return std::make_pair(std::move(fd), ntohs(a.sin_port));
  };
  auto [http_fd, http_port] = listener();
  auto [socks_fd, socks_port] = listener();
  const int http_fd_number = http_fd.get();
  absl::StatusOr<policy::EgressAllowlist> list =
      policy::EgressAllowlist::Resolve(true, std::vector<std::string>{Allowed(echo_.port())});
  SessionProxiesOptions options;
  options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
  options.resolver = resolver_;
  options.http_listen_fd = std::move(http_fd);
  options.socks_listen_fd = std::move(socks_fd);
  absl::StatusOr<std::unique_ptr<SessionProxies>> proxies =
      SessionProxies::Start(loop_, std::move(options));
  ASSERT_TRUE(proxies.ok()) << proxies.status();
  EXPECT_EQ((*proxies)->http_port(), http_port);
  EXPECT_EQ((*proxies)->socks_port(), socks_port);
  Fd http = ConnectTo(http_port);
  EXPECT_EQ(StatusCode(Connect(http.get(), Allowed(echo_.port()))), 200);
  Fd socks = ConnectTo(socks_port);
  ASSERT_EQ(Socks5Handshake(socks.get()), 0);
  EXPECT_EQ(Socks5Request(socks.get(), 1, 3, "allowed.test", echo_.port()), kSocks5Succeeded);
  (*proxies)->Stop();
  EXPECT_EQ(fcntl(http_fd_number, F_GETFD), -1);  // closed with the session
  EXPECT_FALSE(ConnectTo(http_port).valid());
}

TEST_F(SessionProxiesTest, ServesUnixListenersItIsGiven) {
  // As the broker does for a Linux sandbox: the bridge inside connects to these sockets.
  char dir_template[] = "/tmp/proxy-unix-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  auto unix_listener = [](const std::string& path) {
    Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
    EXPECT_EQ(bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return fd;  // not listening yet: the proxy calls listen()
  };
  auto unix_connect = [](const std::string& path) {
    Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
    EXPECT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return fd;
  };
  absl::StatusOr<policy::EgressAllowlist> list =
      policy::EgressAllowlist::Resolve(true, std::vector<std::string>{Allowed(echo_.port())});
  SessionProxiesOptions options;
  options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
  options.resolver = resolver_;
  options.on_violation = violations_.callback();
  std::map<std::string, int> accepted;  // the loop's until Stop() returns
  options.on_connection = [&accepted](absl::string_view proxy) { ++accepted[std::string(proxy)]; };
  options.http_listen_fd = unix_listener(dir + "/http.sock");
  options.socks_listen_fd = unix_listener(dir + "/socks.sock");
  absl::StatusOr<std::unique_ptr<SessionProxies>> proxies =
      SessionProxies::Start(loop_, std::move(options));
  ASSERT_TRUE(proxies.ok()) << proxies.status();
  EXPECT_EQ((*proxies)->http_port(), 0);

  Fd http = unix_connect(dir + "/http.sock");
  ASSERT_EQ(StatusCode(Connect(http.get(), Allowed(echo_.port()))), 200);
  const std::string payload(256 * 1024, 'x');
  std::thread writer([&] { SendAll(http.get(), payload); });
  EXPECT_EQ(ReadExactly(http.get(), payload.size()), payload);
  writer.join();
  Fd refused = unix_connect(dir + "/http.sock");
  EXPECT_EQ(StatusCode(Connect(refused.get(), "other.test:443")), 403);
  Fd socks = unix_connect(dir + "/socks.sock");
  ASSERT_EQ(Socks5Handshake(socks.get()), 0);
  EXPECT_EQ(Socks5Request(socks.get(), 1, 3, "allowed.test", echo_.port()), kSocks5Succeeded);
  ASSERT_TRUE(SendAll(socks.get(), "ping"));
  EXPECT_EQ(ReadExactly(socks.get(), 4), "ping");
  (*proxies)->Stop();
  ASSERT_EQ(violations_.list().size(), 1u);
  EXPECT_EQ(violations_.list()[0].target, "other.test:443");
  // Every accepted client connection is reported, refused ones included (metrics).
  EXPECT_EQ(accepted, (std::map<std::string, int>{{"http", 2}, {"socks5", 1}}));
  std::filesystem::remove_all(dir);
}

TEST_F(SessionProxiesTest, RefusesAGivenDescriptorThatIsNotATcpListenerAndClosesIt) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  Fd pipe_write(pipe_fds[1]);
  absl::StatusOr<policy::EgressAllowlist> list =
      policy::EgressAllowlist::Resolve(true, std::vector<std::string>{});
  SessionProxiesOptions options;
  options.allowlist = std::make_shared<const policy::EgressAllowlist>(*std::move(list));
  options.resolver = resolver_;
  options.http_listen_fd = Fd(pipe_fds[0]);
  EXPECT_EQ(SessionProxies::Start(loop_, std::move(options)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fcntl(pipe_fds[0], F_GETFD), -1);
}

TEST(SessionProxiesStart, NeedsAnAllowlistAndAResolver) {
  EventLoop loop;
  EXPECT_EQ(SessionProxies::Start(loop, SessionProxiesOptions()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ccsandbox::proxy
