// One HTTP exchange with a push's upstream repository (libcurl: TLS verified, no redirects, no
// proxy from the environment), streamed both ways: the request body is pulled as libcurl asks
// for it and the response is handed on as it arrives, so a large pack is never held whole.
// Credentials go in as basic auth and never into a URL, a log line or an error message.
//
//   UpstreamRequest request{.method = "POST", .url = repo + "/git-receive-pack", ...};
//   request.body = [&](char* buf, size_t max) -> absl::StatusOr<size_t> { ... 0 = the end };
//   absl::Status done = Exchange(request, {.on_head = ..., .on_data = ...});
#ifndef CCSANDBOX_GATEWAY_UPSTREAM_H_
#define CCSANDBOX_GATEWAY_UPSTREAM_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ccsandbox::gateway {

struct UpstreamRequest {
  std::string method = "GET";        // GET or POST
  std::string url;                   // http(s)://host/path.git/...
  std::vector<std::string> headers;  // "Content-Type: …", "Accept: …", "Git-Protocol: …"
  // "host:port:address" pins (libcurl's CURLOPT_RESOLVE): the name resolves as the broker's
  // egress does (--egress-hosts-file), not through DNS.
  std::vector<std::string> resolve;
  std::string username;
  std::string password;  // never logged
  // POST: the next body bytes into `buf` (at most `max`); 0 at the end; an error aborts.
  std::function<absl::StatusOr<size_t>(char* buf, size_t max)> body;
  absl::Duration connect_timeout = absl::Seconds(30);
  // Aborted when fewer than 1 byte/s moves for this long (a stalled upstream or client).
  absl::Duration stall_limit = absl::Seconds(120);
};

struct UpstreamSink {
  // The status and the headers worth passing on (Content-Type), once they are in.
  std::function<void(int status, const std::string& content_type)> on_head;
  // Body bytes; false aborts the exchange.
  std::function<bool(absl::string_view)> on_data;
};

// UNAVAILABLE when the upstream cannot be reached or the exchange broke; the message names the
// URL's host and what failed, never a credential.
absl::Status Exchange(const UpstreamRequest& request, const UpstreamSink& sink);

}  // namespace ccsandbox::gateway

#endif  // CCSANDBOX_GATEWAY_UPSTREAM_H_
