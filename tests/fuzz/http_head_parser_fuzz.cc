// libFuzzer target: the HTTP proxy's request-head parser, target parsers and forwarded head.
// Invariants: never crash; a parsed head is within the bounds; the head forwarded upstream is
// itself a valid head without proxy credentials. Build and run: tests/fuzz/run_fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "proxy/http_forward.h"
#include "proxy/http_head_parser.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ccsandbox::proxy;
  const std::string input(reinterpret_cast<const char*>(data), size);

  // Scanning in two steps finds the same end as scanning at once.
  const HeadScan whole = ScanRequestHead(input);
  const size_t split = size == 0 ? 0 : data[0] % (size + 1);
  const HeadScan first = ScanRequestHead(input.substr(0, split));
  const HeadScan resumed =
      ScanRequestHead(input, first.state == HeadScan::State::kIncomplete ? split : 0);
  FUZZ_CHECK(whole.state == resumed.state && whole.head_size == resumed.head_size);
  if (whole.state != HeadScan::State::kComplete) return 0;
  FUZZ_CHECK(whole.head_size <= kMaxRequestHeadBytes);

  absl::StatusOr<HttpRequestHead> head = ParseRequestHead(input.substr(0, whole.head_size));
  if (!head.ok()) {
    const int status = HttpStatusForParseError(head.status());
    FUZZ_CHECK(status == 400 || status == 431 || status == 505);
    return 0;
  }
  FUZZ_CHECK(head->headers.size() <= kMaxHeaderFields);
  if (head->method == "CONNECT") {
    absl::StatusOr<HttpAuthority> authority = ParseConnectTarget(head->target);
    if (authority.ok()) FUZZ_CHECK(authority->port != 0 && !authority->host.empty());
    return 0;
  }
  absl::StatusOr<AbsoluteHttpTarget> target = ParseAbsoluteHttpTarget(head->target);
  if (!target.ok()) return 0;
  FUZZ_CHECK(target->authority.port != 0 && !target->authority.host.empty());
  FUZZ_CHECK(!target->origin_form.empty() && target->origin_form[0] == '/');
  const std::string forwarded = BuildForwardedRequestHead(*head, *target);
  // Each field may gain the space after its colon; Host and Connection: close are added.
  FUZZ_CHECK(forwarded.size() <= whole.head_size + head->headers.size() + 64);
  absl::StatusOr<HttpRequestHead> again = ParseRequestHead(forwarded);
  // Those additions may take the head just past the parser's own limits; nothing else may fail.
  if (!again.ok() && again.status().code() == absl::StatusCode::kResourceExhausted &&
      (head->headers.size() + 2 > kMaxHeaderFields || forwarded.size() > kMaxRequestHeadBytes)) {
    return 0;
  }
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->Find("Proxy-Authorization") == nullptr);
  FUZZ_CHECK(again->Find("Proxy-Connection") == nullptr);
  FUZZ_CHECK(again->Find("Host") != nullptr && again->Find("Host")->value == target->host_header);
  return 0;
}
