#include "launcher/shim/git_credential.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/unique_fd.h"

namespace ccsandbox::launcher {
namespace {

constexpr size_t kMaxRequest = 64 * 1024;
constexpr size_t kMaxResponse = 64 * 1024;

}  // namespace

std::string CredentialAnswer(absl::string_view response) {
  const size_t body = response.find("\r\n\r\n");
  if (!absl::StartsWith(response, "HTTP/1.1 200 ") || body == absl::string_view::npos) return "";
  return std::string(response.substr(body + 4));
}

int RunGitCredentialHelper(const std::string& port_text, const std::string& operation) {
  if (operation != "get") return 0;
  int port = 0;
  if (!absl::SimpleAtoi(port_text, &port) || port <= 0 || port > 65535) {
    fprintf(stderr, "sandbox_shim: --git-credential: bad port '%s'\n", port_text.c_str());
    return 1;
  }
  std::string request;
  char buf[4096];
  for (ssize_t got; (got = read(0, buf, sizeof(buf))) > 0;) {
    request.append(buf, got);
    if (request.size() > kMaxRequest) return 1;
  }
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (!fd.valid() || connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return 0;  // no gateway: no credential
  }
  const std::string message =
      absl::StrCat("POST /-/credential HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n",
                   "Content-Length: ", request.size(), "\r\nConnection: close\r\n\r\n", request);
  for (size_t sent = 0; sent < message.size();) {
    const ssize_t put = send(fd.get(), message.data() + sent, message.size() - sent, MSG_NOSIGNAL);
    if (put <= 0) return 0;
    sent += put;
  }
  std::string response;
  for (ssize_t got; (got = read(fd.get(), buf, sizeof(buf))) > 0;) {
    response.append(buf, got);
    if (response.size() > kMaxResponse) return 0;
  }
  const std::string answer = CredentialAnswer(response);
  fwrite(answer.data(), 1, answer.size(), stdout);
  return 0;
}

}  // namespace ccsandbox::launcher
