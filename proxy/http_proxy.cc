#include "proxy/http_proxy.h"

#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "policy/egress/host.h"
#include "proxy/credentials.h"
#include "proxy/http_forward.h"

namespace ccsandbox::proxy {
namespace {

constexpr size_t kReadChunk = 4096;

absl::string_view StatusText(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 407:
      return "Proxy Authentication Required";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    case 502:
      return "Bad Gateway";
    case 504:
      return "Gateway Timeout";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

// A reason goes into a header: printable ASCII only, bounded.
std::string HeaderSafe(absl::string_view reason) {
  std::string out;
  for (char c : reason.substr(0, 512)) {
    const unsigned char u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7f ? c : '?');
  }
  return out;
}

}  // namespace

HttpProxyConnection::HttpProxyConnection(std::shared_ptr<SessionState> state,
                                         asio::ip::tcp::socket client, bool over_limit)
    : ClientConnection(std::move(state), std::move(client), over_limit,
                       {.chunk = kReadChunk, .buffered = kMaxRequestHeadBytes}) {}

void HttpProxyConnection::OnHandshakeTimeout() {
  if (connecting()) return;  // the connector's own deadline applies
  Reply(408, absl::StrCat("no complete request head within ",
                          absl::FormatDuration(state().options().timeouts.handshake)));
}

void HttpProxyConnection::OnBytes() {
  const HeadScan scan = ScanRequestHead(buffer(), scanned_);
  scanned_ = buffer().size();
  switch (scan.state) {
    case HeadScan::State::kIncomplete:
      Read();
      return;
    case HeadScan::State::kTooLarge:
      Reply(431, "request head larger than 16 KiB");
      return;
    case HeadScan::State::kComplete:
      break;
  }
  absl::StatusOr<HttpRequestHead> head =
      ParseRequestHead(absl::string_view(buffer()).substr(0, scan.head_size));
  if (!head.ok()) {
    Reply(HttpStatusForParseError(head.status()), std::string(head.status().message()));
    return;
  }
  Handle(*head, scan.head_size);
}

bool HttpProxyConnection::Authorized(const HttpRequestHead& head) const {
  const std::optional<ProxyCredentials>& required = state().options().credentials;
  if (!required.has_value()) return true;
  const HttpHeader* header = head.Find("Proxy-Authorization");
  if (header == nullptr) return false;
  absl::string_view value = header->value;
  if (value.size() < 6 || !absl::EqualsIgnoreCase(value.substr(0, 6), "Basic ")) return false;
  std::string decoded;
  if (!absl::Base64Unescape(absl::StripAsciiWhitespace(value.substr(6)), &decoded)) return false;
  const size_t colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  return CredentialsMatch(*required, decoded.substr(0, colon), decoded.substr(colon + 1));
}

void HttpProxyConnection::Handle(const HttpRequestHead& head, size_t head_size) {
  if (!Authorized(head)) {
    Reply(407, "proxy credentials missing or wrong",
          "Proxy-Authenticate: Basic realm=\"sandbox egress\"\r\n");
    return;
  }
  HttpAuthority authority;
  is_connect_ = head.method == "CONNECT";
  if (is_connect_) {
    absl::StatusOr<HttpAuthority> parsed = ParseConnectTarget(head.target);
    if (!parsed.ok()) {
      Reply(400, std::string(parsed.status().message()));
      return;
    }
    authority = *std::move(parsed);
  } else {
    absl::StatusOr<AbsoluteHttpTarget> parsed = ParseAbsoluteHttpTarget(head.target);
    if (!parsed.ok()) {
      Reply(400, std::string(parsed.status().message()));
      return;
    }
    authority = parsed->authority;
    forwarded_head_ = BuildForwardedRequestHead(head, *parsed);
  }
  head_size_ = head_size;
  policy::EgressDecision decision = state().allowlist().CheckHost(authority.host, authority.port);
  target_ = decision.target;
  if (!decision.allowed) {
    Refuse(decision.target, decision.reason);
    return;
  }
  if (over_limit()) {
    // One session may not take the descriptors every other session and Launch need.
    const std::string reason = state().LimitReason();
    state().ReportViolation("http", decision.target, reason, /*log=*/false);
    Reply(503, reason, "Retry-After: 1\r\n");
    return;
  }
  ConnectUpstream(std::move(decision), authority.port);
}

void HttpProxyConnection::OnUpstream(UpstreamResult result) {
  switch (result.kind) {
    case UpstreamResult::Kind::kConnected:
      break;
    case UpstreamResult::Kind::kRefused:
      Refuse(target_, result.reason);
      return;
    case UpstreamResult::Kind::kTimedOut:
      Reply(504, result.reason);
      return;
    case UpstreamResult::Kind::kResolveFailed:
    case UpstreamResult::Kind::kConnectFailed:
      Reply(502, result.reason);
      return;
  }
  std::string early = buffer().substr(head_size_);
  std::string().swap(buffer());
  std::string to_client;
  std::string to_upstream;
  if (is_connect_) {
    to_client = "HTTP/1.1 200 Connection established\r\n\r\n";
    to_upstream = std::move(early);
  } else {
    to_upstream = std::move(forwarded_head_);
    to_upstream += early;
  }
  BecomeTunnel(std::move(*result.socket), std::move(to_client), std::move(to_upstream));
}

void HttpProxyConnection::Refuse(const std::string& target, const std::string& reason) {
  state().ReportViolation("http", target, reason);
  Reply(403, reason);
}

void HttpProxyConnection::Reply(int status, const std::string& reason,
                                const std::string& extra_headers) {
  const std::string safe = HeaderSafe(reason);
  const std::string body = absl::StrCat(safe, "\n");
  ReplyAndClose(absl::StrCat(
      "HTTP/1.1 ", status, " ", StatusText(status), "\r\nX-Sandbox-Reason: ", safe, "\r\n",
      extra_headers, "Content-Type: text/plain; charset=utf-8\r\nContent-Length: ", body.size(),
      "\r\nConnection: close\r\n\r\n", body));
}

}  // namespace ccsandbox::proxy
