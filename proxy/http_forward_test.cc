#include "proxy/http_forward.h"

#include "gtest/gtest.h"

namespace ccsandbox::proxy {
namespace {

TEST(BuildForwardedRequestHead, OriginFormHostFromTheUriAndNoHopByHopFields) {
  absl::StatusOr<HttpRequestHead> head = ParseRequestHead(
      "POST http://allowed.test:8080/p?q=1 HTTP/1.1\r\n"
      "Host: evil.test\r\n"
      "Proxy-Authorization: Basic c2VjcmV0\r\n"
      "Proxy-Connection: keep-alive\r\n"
      "Connection: keep-alive, X-Drop-Me, Content-Length, Host\r\n"
      "X-Drop-Me: 1\r\n"
      "Keep-Alive: timeout=5\r\n"
      "TE: trailers\r\n"
      "Trailer: X-T\r\n"
      "Upgrade: websocket\r\n"
      "User-Agent: t/1\r\n"
      "Content-Length: 3\r\n"
      "\r\n");
  ASSERT_TRUE(head.ok()) << head.status();
  absl::StatusOr<AbsoluteHttpTarget> target = ParseAbsoluteHttpTarget(head->target);
  ASSERT_TRUE(target.ok());
  EXPECT_EQ(BuildForwardedRequestHead(*head, *target),
            "POST /p?q=1 HTTP/1.1\r\n"
            "Host: allowed.test:8080\r\n"
            "User-Agent: t/1\r\n"
            "Content-Length: 3\r\n"
            "Connection: close\r\n"
            "\r\n");
}

TEST(BuildForwardedRequestHead, KeepsChunkedFramingAndTheClientVersion) {
  absl::StatusOr<HttpRequestHead> head =
      ParseRequestHead("PUT http://a.test/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  ASSERT_TRUE(head.ok());
  const std::string out = BuildForwardedRequestHead(*head, *ParseAbsoluteHttpTarget(head->target));
  EXPECT_NE(out.find("Transfer-Encoding: chunked\r\n"), std::string::npos);
  head = ParseRequestHead("GET http://a.test/x HTTP/1.0\r\n\r\n");
  EXPECT_EQ(BuildForwardedRequestHead(*head, *ParseAbsoluteHttpTarget(head->target)),
            "GET /x HTTP/1.0\r\nHost: a.test\r\nConnection: close\r\n\r\n");
}

}  // namespace
}  // namespace ccsandbox::proxy
