// Strict, bounded parsing of an HTTP/1.x request head sent to the egress proxy. Pure: bytes in,
// a parsed head or an error carrying the HTTP status to answer with.
//
//   HeadScan scan = ScanRequestHead(buffer);           // until kComplete or kTooLarge (431)
//   absl::StatusOr<HttpRequestHead> head = ParseRequestHead(buffer.substr(0, scan.head_size));
//   if (!head.ok()) reply(HttpStatusForParseError(head.status()), head.status().message());
//   if (head->method == "CONNECT") ParseConnectTarget(head->target) else
//   ParseAbsoluteHttpTarget(...)
//
// Refused (400 unless said): a head over 16 KiB or more than 100 header fields (431); lines
// not ended by CRLF, bare CR or LF; anything before the request line; methods that are not
// tokens; targets with spaces or control bytes; versions other than HTTP/1.0 and HTTP/1.1 (505
// for other HTTP versions); obsolete line folding; space before a header's colon; control bytes
// in values; Content-Length that is not digits or differs between copies; Transfer-Encoding
// with Content-Length, on HTTP/1.0, or not ending in chunked; more than one Host. The framing
// rules keep the proxy and the upstream from reading one request two ways (request smuggling).
#ifndef CCSANDBOX_PROXY_HTTP_HEAD_PARSER_H_
#define CCSANDBOX_PROXY_HTTP_HEAD_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccsandbox::proxy {

inline constexpr size_t kMaxRequestHeadBytes = 16 * 1024;
inline constexpr size_t kMaxHeaderFields = 100;

struct HeadScan {
  enum class State { kIncomplete, kComplete, kTooLarge };
  State state = State::kIncomplete;
  size_t head_size = 0;  // kComplete: bytes up to and including the blank line
};

// Looks for the end of the head ("\r\n\r\n") in `buffer`; `scanned` is how many bytes an
// earlier call already searched (so repeated calls stay linear).
HeadScan ScanRequestHead(absl::string_view buffer, size_t scanned = 0,
                         size_t limit = kMaxRequestHeadBytes);

struct HttpHeader {
  std::string name;   // as sent
  std::string value;  // without surrounding whitespace
};

struct HttpRequestHead {
  std::string method;
  std::string target;
  int minor_version = 1;  // HTTP/1.<minor_version>
  std::vector<HttpHeader> headers;

  // The first header named `name` (case-insensitive), or nullptr.
  const HttpHeader* Find(absl::string_view name) const;
};

// Parses a complete head (ScanRequestHead's head_size bytes). Errors: INVALID_ARGUMENT (400),
// RESOURCE_EXHAUSTED (431), UNIMPLEMENTED (505); the message is safe to put in a header.
absl::StatusOr<HttpRequestHead> ParseRequestHead(absl::string_view head);

// The HTTP status code for an error from this file.
int HttpStatusForParseError(const absl::Status& status);

struct HttpAuthority {
  std::string host;  // as written, without IPv6 brackets; the egress policy normalises it
  uint16_t port = 0;
};

// CONNECT's authority-form "host:port" ("[v6]:port"); the port is required.
absl::StatusOr<HttpAuthority> ParseConnectTarget(absl::string_view target);

struct AbsoluteHttpTarget {
  HttpAuthority authority;
  std::string host_header;  // the authority as written: the Host the origin server gets
  std::string origin_form;  // "/path?query" for the forwarded request line
};

// absolute-form "http://host[:port]/path?query" (scheme case-insensitive, port 80 by default).
// https:// is refused (clients use CONNECT for it), as are userinfo and fragments.
absl::StatusOr<AbsoluteHttpTarget> ParseAbsoluteHttpTarget(absl::string_view target);

}  // namespace ccsandbox::proxy

#endif  // CCSANDBOX_PROXY_HTTP_HEAD_PARSER_H_
