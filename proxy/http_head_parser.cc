#include "proxy/http_head_parser.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ccsandbox::proxy {
namespace {

bool IsTokenChar(char c) {
  if (absl::ascii_isalnum(c)) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsToken(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar);
}

bool IsFieldValueChar(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u == '\t' || (u >= 0x20 && u != 0x7f);
}

absl::Status Bad(absl::string_view why) { return absl::InvalidArgumentError(why); }

absl::StatusOr<uint16_t> ParsePort(absl::string_view text) {
  if (text.empty() || text.size() > 5) return Bad("invalid port");
  uint32_t port = 0;
  for (char c : text) {
    if (!absl::ascii_isdigit(c)) return Bad("invalid port");
    port = port * 10 + (c - '0');
  }
  if (port == 0 || port > 65535) return Bad("invalid port");
  return static_cast<uint16_t>(port);
}

// "host", "host:port", "[v6]", "[v6]:port". No userinfo.
absl::StatusOr<HttpAuthority> ParseAuthority(absl::string_view text, bool port_required,
                                             uint16_t default_port) {
  if (text.empty()) return Bad("empty authority");
  if (absl::StrContains(text, '@')) return Bad("userinfo in the request target is not allowed");
  HttpAuthority authority;
  absl::string_view port_text;
  bool has_port = false;
  if (text.front() == '[') {
    const size_t close = text.find(']');
    if (close == absl::string_view::npos) return Bad("unterminated IPv6 literal");
    authority.host = std::string(text.substr(1, close - 1));
    absl::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Bad("garbage after IPv6 literal");
      port_text = rest.substr(1);
      has_port = true;
    }
    if (authority.host.find(':') == std::string::npos) return Bad("invalid IPv6 literal");
  } else {
    const size_t colon = text.find(':');
    if (colon != text.rfind(':')) return Bad("IPv6 literals need brackets");
    authority.host = std::string(text.substr(0, colon));
    if (colon != absl::string_view::npos) {
      port_text = text.substr(colon + 1);
      has_port = true;
    }
  }
  if (authority.host.empty()) return Bad("empty host");
  if (has_port) {
    absl::StatusOr<uint16_t> port = ParsePort(port_text);
    if (!port.ok()) return port.status();
    authority.port = *port;
  } else if (port_required) {
    return Bad("CONNECT needs host:port");
  } else {
    authority.port = default_port;
  }
  return authority;
}

// The head's lines without their CRLFs: the request line first, then one per header field.
absl::StatusOr<std::vector<absl::string_view>> SplitHeadLines(absl::string_view head) {
  if (head.size() > kMaxRequestHeadBytes) {
    return absl::ResourceExhaustedError("request head larger than 16 KiB");
  }
  if (!absl::ConsumeSuffix(&head, "\r\n\r\n")) return Bad("request head not ended by CRLF CRLF");
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  for (absl::string_view line : lines) {
    if (line.find_first_of("\r\n") != absl::string_view::npos) {
      return Bad("bare CR or LF in the request head");
    }
  }
  return lines;
}

// "HTTP/1.1" -> 1, "HTTP/1.0" -> 0; UNIMPLEMENTED (505) for another well-formed HTTP version.
absl::StatusOr<int> ParseHttpVersion(absl::string_view version) {
  if (version == "HTTP/1.1") return 1;
  if (version == "HTTP/1.0") return 0;
  if (absl::StartsWith(version, "HTTP/") && version.size() == 8 &&
      absl::ascii_isdigit(version[5]) && version[6] == '.' && absl::ascii_isdigit(version[7])) {
    return absl::UnimplementedError("only HTTP/1.0 and HTTP/1.1 are supported");
  }
  return Bad("malformed HTTP version");
}

// The request line: method SP target SP version.
absl::Status ParseRequestLine(absl::string_view line, HttpRequestHead& request) {
  std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
  if (parts.size() != 3) return Bad("malformed request line");
  if (!IsToken(parts[0])) return Bad("malformed method");
  if (parts[1].empty()) return Bad("empty request target");
  for (char c : parts[1]) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return Bad("invalid byte in request target");
  }
  absl::StatusOr<int> minor_version = ParseHttpVersion(parts[2]);
  if (!minor_version.ok()) return minor_version.status();
  request.minor_version = *minor_version;
  request.method = std::string(parts[0]);
  request.target = std::string(parts[1]);
  return absl::OkStatus();
}

// One header field line: "name: value", the value without surrounding spaces and tabs.
absl::StatusOr<HttpHeader> ParseHeaderLine(absl::string_view line) {
  if (line.empty()) return Bad("empty header line");
  if (line.front() == ' ' || line.front() == '\t') return Bad("obsolete header line folding");
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return Bad("header line without ':'");
  const absl::string_view name = line.substr(0, colon);
  if (!IsToken(name)) return Bad("malformed header name (no space before ':')");
  absl::string_view value = line.substr(colon + 1);
  for (char c : value) {
    if (!IsFieldValueChar(c)) return Bad("control byte in a header value");
  }
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
    value.remove_prefix(1);
  }
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
    value.remove_suffix(1);
  }
  return HttpHeader{std::string(name), std::string(value)};
}

// Framing: one unambiguous reading of where the body ends, and one Host.
absl::Status CheckFraming(const HttpRequestHead& request) {
  const HttpHeader* content_length = nullptr;
  bool transfer_encoding = false;
  int hosts = 0;
  for (const HttpHeader& header : request.headers) {
    if (absl::EqualsIgnoreCase(header.name, "Content-Length")) {
      if (header.value.empty() || header.value.size() > 18 ||
          !std::all_of(header.value.begin(), header.value.end(), absl::ascii_isdigit)) {
        return Bad("invalid Content-Length");
      }
      if (content_length != nullptr && content_length->value != header.value) {
        return Bad("conflicting Content-Length headers");
      }
      content_length = &header;
    } else if (absl::EqualsIgnoreCase(header.name, "Transfer-Encoding")) {
      transfer_encoding = true;
      const absl::string_view last = absl::StripAsciiWhitespace(header.value.substr(
          header.value.rfind(',') == std::string::npos ? 0 : header.value.rfind(',') + 1));
      if (!absl::EqualsIgnoreCase(last, "chunked")) {
        return Bad("Transfer-Encoding must end in chunked");
      }
    } else if (absl::EqualsIgnoreCase(header.name, "Host")) {
      ++hosts;
    }
  }
  if (transfer_encoding && content_length != nullptr) {
    return Bad("both Transfer-Encoding and Content-Length");
  }
  if (transfer_encoding && request.minor_version == 0) {
    return Bad("Transfer-Encoding on HTTP/1.0");
  }
  if (hosts > 1) return Bad("more than one Host header");
  return absl::OkStatus();
}

}  // namespace

HeadScan ScanRequestHead(absl::string_view buffer, size_t scanned, size_t limit) {
  HeadScan scan;
  const size_t from = scanned > 3 ? scanned - 3 : 0;
  const absl::string_view window = buffer.substr(0, std::min(buffer.size(), limit));
  const size_t end = from < window.size() ? window.find("\r\n\r\n", from) : absl::string_view::npos;
  if (end != absl::string_view::npos) {
    scan.state = HeadScan::State::kComplete;
    scan.head_size = end + 4;
  } else if (buffer.size() >= limit) {
    scan.state = HeadScan::State::kTooLarge;
  }
  return scan;
}

const HttpHeader* HttpRequestHead::Find(absl::string_view name) const {
  for (const HttpHeader& header : headers) {
    if (absl::EqualsIgnoreCase(header.name, name)) return &header;
  }
  return nullptr;
}

absl::StatusOr<HttpRequestHead> ParseRequestHead(absl::string_view head) {
  absl::StatusOr<std::vector<absl::string_view>> lines = SplitHeadLines(head);
  if (!lines.ok()) return lines.status();
  HttpRequestHead request;
  if (absl::Status line = ParseRequestLine((*lines)[0], request); !line.ok()) return line;
  if (lines->size() - 1 > kMaxHeaderFields) {
    return absl::ResourceExhaustedError("more than 100 header fields");
  }
  for (size_t i = 1; i < lines->size(); ++i) {
    absl::StatusOr<HttpHeader> header = ParseHeaderLine((*lines)[i]);
    if (!header.ok()) return header.status();
    request.headers.push_back(*std::move(header));
  }
  if (absl::Status framing = CheckFraming(request); !framing.ok()) return framing;
  return request;
}

int HttpStatusForParseError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kResourceExhausted:
      return 431;
    case absl::StatusCode::kUnimplemented:
      return 505;
    default:
      return 400;
  }
}

absl::StatusOr<HttpAuthority> ParseConnectTarget(absl::string_view target) {
  if (target.find_first_of("/?#") != absl::string_view::npos) {
    return Bad("CONNECT target must be host:port");
  }
  return ParseAuthority(target, /*port_required=*/true, 0);
}

absl::StatusOr<AbsoluteHttpTarget> ParseAbsoluteHttpTarget(absl::string_view target) {
  constexpr absl::string_view kHttp = "http://";
  if (target.size() < kHttp.size() ||
      !absl::EqualsIgnoreCase(target.substr(0, kHttp.size()), kHttp)) {
    if (absl::StartsWithIgnoreCase(target, "https://")) {
      return Bad("https:// in absolute-form; use CONNECT for https");
    }
    if (absl::StartsWith(target, "/")) {
      return Bad("origin-form request to a proxy; send absolute-form (http://host/path)");
    }
    return Bad("request target must be an absolute http:// URI");
  }
  if (absl::StrContains(target, '#')) return Bad("fragment in the request target");
  absl::string_view rest = target.substr(kHttp.size());
  const size_t end = rest.find_first_of("/?");
  const absl::string_view authority_text = rest.substr(0, end);
  absl::StatusOr<HttpAuthority> authority =
      ParseAuthority(authority_text, /*port_required=*/false, 80);
  if (!authority.ok()) return authority.status();
  AbsoluteHttpTarget out;
  out.authority = *std::move(authority);
  out.host_header = std::string(authority_text);
  if (end == absl::string_view::npos) {
    out.origin_form = "/";
  } else if (rest[end] == '?') {
    out.origin_form = absl::StrCat("/", rest.substr(end));
  } else {
    out.origin_form = std::string(rest.substr(end));
  }
  return out;
}

}  // namespace ccsandbox::proxy
