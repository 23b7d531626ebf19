#include "proxy/http_forward.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ccsandbox::proxy {
namespace {

constexpr absl::string_view kHopByHop[] = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
    "host",
};

// Connection may name more hop-by-hop fields, but never the ones that frame the body or
// route it ("Connection: Content-Length" would change how the upstream reads the body).
bool MayBeNamedByConnection(absl::string_view lower) {
  return lower != "content-length" && lower != "transfer-encoding" && lower != "host";
}

}  // namespace

std::string BuildForwardedRequestHead(const HttpRequestHead& request,
                                      const AbsoluteHttpTarget& target) {
  std::vector<std::string> named;
  for (const HttpHeader& header : request.headers) {
    if (!absl::EqualsIgnoreCase(header.name, "Connection")) continue;
    for (absl::string_view token : absl::StrSplit(header.value, ',')) {
      std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(token));
      if (!lower.empty() && MayBeNamedByConnection(lower)) named.push_back(std::move(lower));
    }
  }
  std::string out = absl::StrCat(request.method, " ", target.origin_form, " HTTP/1.",
                                 request.minor_version, "\r\nHost: ", target.host_header, "\r\n");
  for (const HttpHeader& header : request.headers) {
    const std::string lower = absl::AsciiStrToLower(header.name);
    bool drop = false;
    for (absl::string_view hop : kHopByHop) drop |= lower == hop;
    for (const std::string& name : named) drop |= lower == name;
    if (!drop) absl::StrAppend(&out, header.name, ": ", header.value, "\r\n");
  }
  absl::StrAppend(&out, "Connection: close\r\n\r\n");
  return out;
}

}  // namespace ccsandbox::proxy
